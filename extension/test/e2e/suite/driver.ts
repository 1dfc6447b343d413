// The suite's handle on the browser page (test/e2e/run.mjs serves it): clicks,
// typing and reading text in the workbench and in the chat webview.
const url = process.env.TASK_X_E2E_DRIVER;

/** The CSS selector of an element only the chat webview's page has. */
export const CHAT_FRAME = '[data-instance="sidebar"] [data-testid="chat-root"]';

export async function drive<T = unknown>(action: string, params: Record<string, unknown> = {}): Promise<T> {
  if (!url) throw new Error('TASK_X_E2E_DRIVER is not set: the suite runs only under test/e2e/run.mjs');
  const res = await fetch(url, { method: 'POST', body: JSON.stringify({ action, ...params }) });
  const body = (await res.json()) as { value?: T; error?: string };
  if (body.error !== undefined) throw new Error(`page driver ${action}: ${body.error}`);
  return body.value as T;
}

export const page = {
  click: (selector: string, frame = 'workbench') => drive('click', { selector, frame }),
  fill: (selector: string, text: string, frame = 'workbench') => drive('fill', { selector, text, frame }),
  press: (selector: string, key: string, frame = 'workbench') => drive('press', { selector, key, frame }),
  waitFor: (selector: string, frame = 'workbench', state = 'visible', timeoutMs = 60_000) =>
    drive('waitFor', { selector, frame, state, timeoutMs }),
  text: (selector: string, frame = 'workbench') => drive<string[]>('text', { selector, frame }),
  count: (selector: string, frame = 'workbench') => drive<number>('count', { selector, frame }),
  evaluate: <T>(expression: string, frame = 'workbench') => drive<T>('evaluate', { expression, frame }),
  screenshot: (name: string) => drive<string>('screenshot', { name }),
  key: (key: string) => drive('keyboard', { key }),
};
