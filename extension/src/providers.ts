// Named providers: settings hold { name, kind, model, baseUrl, timeoutMs }; the API
// key of each lives only in VS Code's SecretStorage (never in settings, the logs
// or the webview). The setup flow lists models with provider/models and checks
// the connection with provider/test.
import * as vscode from 'vscode';
import { PROVIDER_KINDS, settings, update, type NamedProvider, type ProviderKind } from './config';
import type { RuntimeClient } from './runtimeClient';
import { describeError } from './errors';
import type { ModelInfo, ProviderConfig, ProviderTestResult } from './protocol';

/** A ProviderConfig for the wire, the key filled in from SecretStorage. */
export type WireProvider = ProviderConfig;
export type ModelEntry = ModelInfo;

const secretKey = (name: string): string => `taskX.apiKey.${name}`;

/** Whether the runtime refuses this kind without an API key (provider.RequiresAPIKey: all but Ollama). */
export const needsKey = (kind: ProviderKind): boolean => kind !== 'ollama';

/**
 * A provider that needs a key has none in this window's SecretStorage (never set, removed, or
 * the secret store was not carried over, e.g. after a reload in another profile). Thrown before
 * anything reaches the runtime, so the user reads the provider's name instead of the runtime's
 * "apiKey is required for kind …"; `offerKey` offers to set it.
 */
export class MissingKeyError extends Error {
  constructor(readonly provider: string) {
    super(`The provider "${provider}" has no API key in VS Code's secret storage. Set it with "Set API Key".`);
    this.name = 'MissingKeyError';
  }
}

export const KIND_LABELS: Record<ProviderKind, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  openaiCompatible: 'OpenAI-compatible server (vLLM, LM Studio, OpenRouter, llama.cpp, ...)',
  ollama: 'Ollama',
};

const DEFAULT_BASE: Partial<Record<ProviderKind, string>> = {
  ollama: 'http://127.0.0.1:11434',
  openaiCompatible: 'http://127.0.0.1:8000/v1',
};

export class Providers {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly runtime: RuntimeClient,
  ) {}

  list(): NamedProvider[] {
    return settings.providers();
  }

  /** The provider tasks run with: the `taskX.provider` setting, else the first one. */
  active(): NamedProvider | undefined {
    const all = this.list();
    const name = settings.activeProvider();
    return all.find((p) => p.name === name) ?? all[0];
  }

  async wire(p: NamedProvider, model?: string): Promise<WireProvider> {
    const out: WireProvider = { kind: p.kind, model: model ?? p.model };
    if (p.baseUrl) out.baseUrl = p.baseUrl;
    if (p.timeoutMs) out.timeoutMs = p.timeoutMs;
    const key = await this.secrets.get(secretKey(p.name));
    if (key) out.apiKey = key;
    else if (needsKey(p.kind)) throw new MissingKeyError(p.name);
    return out;
  }

  /** The named providers that need a key and have none, in the order given. */
  async missingKeys(names: string[]): Promise<string[]> {
    const out: string[] = [];
    for (const n of names) {
      const p = this.list().find((x) => x.name === n);
      if (p && needsKey(p.kind) && !(await this.secrets.get(secretKey(p.name)))) out.push(p.name);
    }
    return out;
  }

  /** Asks for a provider's key and stores it; false when dismissed. */
  async promptKey(name: string): Promise<boolean> {
    const key = await vscode.window.showInputBox({
      title: `task-x: API key for ${name}`,
      prompt: `API key for ${name} (kept in VS Code's secret storage, never in settings)`,
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'The key is required for this kind of provider' : undefined),
    });
    if (!key?.trim()) return false;
    await this.secrets.store(secretKey(name), key.trim());
    this.changed.fire();
    return true;
  }

  /** Tells that a provider has no key, with "Set API Key"; true when the user set one. */
  async offerKey(name: string, why = ''): Promise<boolean> {
    const a = await vscode.window.showErrorMessage(`task-x: ${why}${new MissingKeyError(name).message}`, 'Set API Key');
    return a === 'Set API Key' ? this.promptKey(name) : false;
  }

  async wireByName(name: string, model?: string): Promise<WireProvider | undefined> {
    const p = this.list().find((x) => x.name === name);
    return p ? this.wire(p, model) : undefined;
  }

  /** Saves a provider (replacing one of the same name) and its key, and makes it active. */
  async save(p: NamedProvider, apiKey: string | undefined): Promise<void> {
    if (apiKey !== undefined) {
      if (apiKey === '') await this.secrets.delete(secretKey(p.name));
      else await this.secrets.store(secretKey(p.name), apiKey);
    }
    const rest = this.list().filter((x) => x.name !== p.name);
    await update('providers', [...rest, p]);
    await update('provider', p.name);
    this.changed.fire();
  }

  async remove(name: string): Promise<void> {
    await this.secrets.delete(secretKey(name));
    await update('providers', this.list().filter((x) => x.name !== name));
    if (settings.activeProvider() === name) await update('provider', this.list()[0]?.name ?? '');
    this.changed.fire();
  }

  async setActive(name: string, model?: string): Promise<void> {
    if (model) {
      const p = this.list().find((x) => x.name === name);
      if (p && p.model !== model) {
        await update('providers', this.list().map((x) => (x.name === name ? { ...x, model } : x)));
      }
    }
    await update('provider', name);
    this.changed.fire();
  }

  async models(p: WireProvider, signal?: AbortSignal): Promise<ModelEntry[]> {
    const r = await this.runtime.request('provider/models', { provider: p }, signal);
    return Array.isArray(r?.models) ? r.models : [];
  }

  test(p: WireProvider): Promise<ProviderTestResult> {
    return this.runtime.request('provider/test', { provider: p });
  }

  /**
   * The setup flow (command "task-x: Add Provider"): kind, name, address, key, model, test.
   * Every step keeps its input open when focus leaves it (ignoreFocusOut): the walkthrough
   * starts the flow and takes focus back, which closed step 2 at once.
   */
  async setupFlow(): Promise<NamedProvider | undefined> {
    const kindPick = await vscode.window.showQuickPick(
      PROVIDER_KINDS.map((k) => ({ label: KIND_LABELS[k], providerKind: k })),
      { title: 'task-x: Add a model provider (1/5)', placeHolder: 'Which kind of provider?', ignoreFocusOut: true },
    );
    if (!kindPick) return undefined;
    const kind = kindPick.providerKind;
    const existing = new Set(this.list().map((p) => p.name));
    const name = await vscode.window.showInputBox({
      title: 'task-x: Add a model provider (2/5)',
      ignoreFocusOut: true,
      prompt: 'A name for this provider (you can set up several)',
      value: existing.has(kind) ? `${kind}-${existing.size + 1}` : kind,
      validateInput: (v) => (v.trim() === '' ? 'A name is required' : undefined),
    });
    if (!name) return undefined;
    let baseUrl: string | undefined;
    if (kind === 'openaiCompatible' || kind === 'ollama') {
      baseUrl = await vscode.window.showInputBox({
        title: 'task-x: Add a model provider (3/5)',
        ignoreFocusOut: true,
        prompt: kind === 'ollama' ? 'Ollama address' : 'Server address with its API prefix, as the OpenAI SDK takes it',
        value: DEFAULT_BASE[kind],
        validateInput: (v) => (/^https?:\/\/[^\s@]+$/.test(v.trim()) ? undefined : 'An http:// or https:// address without credentials'),
      });
      if (baseUrl === undefined) return undefined;
      baseUrl = baseUrl.trim();
    }
    let apiKey: string | undefined;
    if (kind !== 'ollama') {
      apiKey = await vscode.window.showInputBox({
        title: 'task-x: Add a model provider (4/5)',
        prompt: `API key for ${name} (kept in VS Code's secret storage, never in settings)`,
        password: true,
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() === '' ? 'The key is required for this kind of provider' : undefined),
      });
      if (apiKey === undefined) return undefined;
      apiKey = apiKey.trim();
    }
    const probe: WireProvider = { kind, model: 'default' };
    if (baseUrl) probe.baseUrl = baseUrl;
    if (apiKey) probe.apiKey = apiKey;
    let models: ModelEntry[] = [];
    try {
      models = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `task-x: listing the models of ${name}…` },
        () => this.models(probe),
      );
    } catch (err) {
      void vscode.window.showWarningMessage(`task-x: could not list the models of ${name}: ${describeError(err)}. You can type a model id.`);
    }
    let model: string | undefined;
    if (models.length > 0) {
      const pick = await vscode.window.showQuickPick(
        models.map((m) => ({ label: m.id, description: describeModel(m), id: m.id })),
        { title: 'task-x: Add a model provider (5/5)', placeHolder: 'Which model?', matchOnDescription: true, ignoreFocusOut: true },
      );
      model = pick?.id;
    } else {
      model = await vscode.window.showInputBox({ title: 'task-x: Add a model provider (5/5)', prompt: 'Model id', ignoreFocusOut: true });
    }
    if (!model) return undefined;
    const np: NamedProvider = { name: name.trim(), kind, model };
    if (baseUrl) np.baseUrl = baseUrl;
    // Tested before it is saved: a provider that fails its test (a wrong key, a server
    // not running) is kept only when the user says so, and never replaces the active one
    // silently (QA: it was saved and made active, and the next task failed).
    let tested: ProviderTestResult;
    try {
      tested = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `task-x: testing ${np.name}…` },
        () => this.test({ ...probe, model }),
      );
    } catch (err) {
      const a = await vscode.window.showErrorMessage(
        `task-x: ${np.name} failed its test: ${describeError(err)}. It was not saved.`,
        'Save Anyway',
      );
      if (a !== 'Save Anyway') return undefined;
      await this.save(np, apiKey);
      return np;
    }
    await this.save(np, apiKey);
    this.report(np, tested);
    return np;
  }

  /** provider/test, told in a notification: latency and model availability, or the plain reason. */
  async testAndReport(p: NamedProvider): Promise<ProviderTestResult | undefined> {
    try {
      const r = await this.test(await this.wire(p));
      this.report(p, r);
      return r;
    } catch (err) {
      void vscode.window.showErrorMessage(`task-x: ${p.name} failed its test: ${describeError(err)}`);
      return undefined;
    }
  }

  private report(p: NamedProvider, r: ProviderTestResult): void {
    const avail = r.modelAvailable === null ? 'the server does not list models' : r.modelAvailable ? `${p.model} is available` : `${p.model} is NOT among its models`;
    const msg = `task-x: ${p.name} answered in ${r.latencyMs} ms; ${avail}.`;
    if (r.modelAvailable === false) void vscode.window.showWarningMessage(msg);
    else void vscode.window.showInformationMessage(msg);
  }
}

export function describeModel(m: ModelEntry): string {
  const parts: string[] = [];
  if (m.contextWindow) parts.push(`${Math.round(m.contextWindow / 1000)}K context`);
  if (m.capabilities && m.capabilities.length > 0) parts.push(m.capabilities.join(', '));
  if (m.details) parts.push(m.details);
  return parts.join(' · ');
}
