const MAX_ATTEMPTS = 3;

export async function fetchWithRetry(url: string, init: RequestInit = {}, attempts = MAX_ATTEMPTS): Promise<Response> {
  let lastError: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      const res = await fetch(url, { ...init, headers: { "Content-Type": "application/json", ...init.headers } });
      if (res.status < 500) return res;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 200 * 2 ** i));
  }
  throw lastError ?? new Error(`request to ${url} failed`);
}
