// A minimal stand-in for the `vscode` module, so unit tests can drive host code
// (the provider setup flow, best-of-N checks) in Node. Importing this file first
// makes `require('vscode')` return `fake`. Every dialog is recorded with its
// options and answered from `answers` in order (undefined when none is left).
import Module from 'node:module';

export interface Shown {
  kind: 'quickPick' | 'inputBox' | 'info' | 'warning' | 'error';
  options?: Record<string, unknown>;
  items?: unknown[];
  message?: string;
  buttons?: string[];
}

export const shown: Shown[] = [];
/** Webview panels made, newest last (their html is what the host rendered). */
export const panels: { webview: { html: string } }[] = [];
/** Answers in order: for a quick pick, a function picking from its items; for an input box, the text; for a message, the button. */
export const answers: unknown[] = [];
const config = new Map<string, unknown>();
const commands: { id: string; args: unknown[] }[] = [];
/** Commands host code registered (registerCommand), by id. */
export const registered = new Map<string, (...args: unknown[]) => unknown>();

function next(items?: unknown[]): unknown {
  const a = answers.shift();
  return typeof a === 'function' ? (a as (items?: unknown[]) => unknown)(items) : a;
}

class EventEmitter<T> {
  private listeners: ((e: T) => void)[] = [];
  event = (l: (e: T) => void) => {
    this.listeners.push(l);
    return { dispose: () => (this.listeners = this.listeners.filter((x) => x !== l)) };
  };
  fire(e: T): void {
    for (const l of this.listeners) l(e);
  }
  dispose(): void {
    this.listeners = [];
  }
}

export const fake = {
  EventEmitter,
  ProgressLocation: { Notification: 15, Window: 10 },
  ConfigurationTarget: { Global: 1 },
  ViewColumn: { Active: -1, Beside: -2 },
  Uri: { file: (p: string) => ({ fsPath: p, scheme: 'file' }) },
  window: {
    showQuickPick: async (items: unknown[], options?: Record<string, unknown>) => {
      shown.push({ kind: 'quickPick', items, options });
      return next(items);
    },
    showInputBox: async (options?: Record<string, unknown>) => {
      shown.push({ kind: 'inputBox', options });
      return next();
    },
    showInformationMessage: async (message: string, ...buttons: string[]) => {
      shown.push({ kind: 'info', message, buttons });
      return buttons.length ? next() : undefined;
    },
    showWarningMessage: async (message: string, ...buttons: string[]) => {
      shown.push({ kind: 'warning', message, buttons });
      return buttons.length ? next() : undefined;
    },
    showErrorMessage: async (message: string, ...buttons: string[]) => {
      shown.push({ kind: 'error', message, buttons });
      return buttons.length ? next() : undefined;
    },
    createWebviewPanel: () => {
      const panel = {
        webview: { html: '', cspSource: 'vscode-resource:', onDidReceiveMessage: () => ({ dispose() {} }) },
        onDidDispose: () => ({ dispose() {} }),
        reveal() {},
        dispose() {},
      };
      panels.push(panel);
      return panel;
    },
    withProgress: async <T>(_o: unknown, task: () => Promise<T>): Promise<T> => task(),
    registerFileDecorationProvider: () => ({ dispose() {} }),
  },
  commands: {
    executeCommand: async (id: string, ...args: unknown[]) => {
      commands.push({ id, args });
    },
    registerCommand: (id: string, fn: (...args: unknown[]) => unknown) => {
      registered.set(id, fn);
      return { dispose: () => registered.delete(id) };
    },
  },
  workspace: {
    getConfiguration: (section: string) => ({
      get: <T>(key: string, dflt?: T): T => (config.has(`${section}.${key}`) ? (config.get(`${section}.${key}`) as T) : (dflt as T)),
      update: async (key: string, value: unknown) => {
        config.set(`${section}.${key}`, value);
      },
    }),
  },
};

export const executed = commands;

/** Clears what the dialogs showed, the scripted answers, the settings and the commands. */
export function reset(): void {
  shown.length = 0;
  answers.length = 0;
  config.clear();
  commands.length = 0;
  panels.length = 0;
  registered.clear();
}

/** An in-memory SecretStorage. */
export function secrets(): { get(k: string): Promise<string | undefined>; store(k: string, v: string): Promise<void>; delete(k: string): Promise<void>; onDidChange: unknown } {
  const m = new Map<string, string>();
  return {
    get: async (k) => m.get(k),
    store: async (k, v) => void m.set(k, v),
    delete: async (k) => void m.delete(k),
    onDidChange: () => ({ dispose() {} }),
  };
}

const M = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const load = M._load;
M._load = function (this: unknown, request: string, ...rest: unknown[]) {
  if (request === 'vscode') return fake;
  return load.call(this, request, ...rest);
};
