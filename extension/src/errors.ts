// Protocol errors in plain words for notifications and the chat.
import { ConnectionClosedError, ErrorCodes, RpcError } from './runtime/rpc';

const PROVIDER_KINDS: Record<string, string> = {
  invalidConfig: 'the provider settings are not valid',
  invalidRequest: 'the provider refused the request',
  auth: 'the API key was refused',
  permissionDenied: 'the key may not use this model',
  notFound: 'the model or address was not found',
  rateLimited: 'the provider is rate-limiting (try again shortly)',
  overloaded: 'the provider is overloaded (try again shortly)',
  server: 'the provider had a server error',
  network: 'the provider could not be reached',
  timeout: 'the provider did not answer in time',
  cancelled: 'cancelled',
  protocol: 'the provider answered something unexpected',
};

export function describeError(err: unknown): string {
  if (err instanceof RpcError) {
    const data = err.data as { kind?: string; message?: string; status?: number } | undefined;
    if (err.code === ErrorCodes.ProviderError && data?.kind) {
      const what = PROVIDER_KINDS[data.kind] ?? data.kind;
      return `${what}${data.status ? ` (HTTP ${data.status})` : ''}: ${data.message ?? err.message}`;
    }
    if (err.code === ErrorCodes.NoWorkspace) return 'no workspace folder is open';
    if (err.code === ErrorCodes.RequestCancelled) return 'cancelled';
    return err.message;
  }
  if (err instanceof ConnectionClosedError) return `${err.message}; it is being restarted`;
  return err instanceof Error ? err.message : String(err);
}

/**
 * Whether a request ended because it was cancelled (the user's Stop aborts agent/run at once).
 * The chat shows no "could not run" error for it: the runtime's done event draws the Stopped card.
 */
export function isCancelled(err: unknown): boolean {
  return err instanceof RpcError && err.code === ErrorCodes.RequestCancelled;
}
