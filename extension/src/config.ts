// The extension's settings (package.json contributes.configuration) read in one
// place. Provider settings, the runtime binary and the sandbox switch are
// application- or machine-scoped: a workspace cannot redirect a key to another
// host or run another binary (workspace trust, issue 35 §7).
import * as vscode from 'vscode';

export const SECTION = 'taskX';

export type ProviderKind = 'anthropic' | 'openai' | 'openaiCompatible' | 'ollama';
export const PROVIDER_KINDS: readonly ProviderKind[] = ['anthropic', 'openai', 'openaiCompatible', 'ollama'];

/** A named provider as the user set it up; its key lives in SecretStorage under its name. */
export interface NamedProvider {
  name: string;
  kind: ProviderKind;
  model: string;
  baseUrl?: string;
  timeoutMs?: number;
}

export interface RouteSetting {
  kinds: string[];
  /** The name of a configured provider. */
  provider: string;
}

export interface PriceSetting {
  model: string;
  inputPerMtok: number;
  outputPerMtok: number;
}

function cfg(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

export const settings = {
  runtimePath: (): string => cfg().get<string>('runtime.path', '').trim(),
  logLevel: (): string => cfg().get<string>('runtime.logLevel', 'warn'),
  sandbox: (): boolean => cfg().get<boolean>('runtime.sandbox', true),
  providers: (): NamedProvider[] => {
    const raw = cfg().get<unknown>('providers', []);
    if (!Array.isArray(raw)) return [];
    const out: NamedProvider[] = [];
    for (const p of raw) {
      if (!p || typeof p !== 'object') continue;
      const o = p as Record<string, unknown>;
      if (typeof o.name !== 'string' || !PROVIDER_KINDS.includes(o.kind as ProviderKind) || typeof o.model !== 'string') continue;
      const np: NamedProvider = { name: o.name, kind: o.kind as ProviderKind, model: o.model };
      if (typeof o.baseUrl === 'string' && o.baseUrl !== '') np.baseUrl = o.baseUrl;
      if (typeof o.timeoutMs === 'number') np.timeoutMs = o.timeoutMs;
      out.push(np);
    }
    return out;
  },
  activeProvider: (): string => cfg().get<string>('provider', ''),
  routes: (): RouteSetting[] => (cfg().get<RouteSetting[]>('routes', []) ?? []).filter((r) => r && Array.isArray(r.kinds) && typeof r.provider === 'string'),
  fallbacks: (): string[] => (cfg().get<string[]>('fallbacks', []) ?? []).filter((s) => typeof s === 'string'),
  prices: (): PriceSetting[] => (cfg().get<PriceSetting[]>('prices', []) ?? []).filter((p) => p && typeof p.model === 'string'),
  exclude: (): string[] => (cfg().get<string[]>('workspace.exclude', []) ?? []).filter((s) => typeof s === 'string'),
  workspaceFolder: (): string => cfg().get<string>('workspace.folder', ''),
  chatMode: (): string => cfg().get<string>('chat.mode', 'agent'),
  includeEditorContext: (): boolean => cfg().get<boolean>('chat.includeEditorContext', true),
  policyMode: (): string => cfg().get<string>('policy.mode', 'default'),
  /** team mode: the provider (by name) of each subagent role. */
  roleProviders: (): { role: string; provider: string }[] =>
    (cfg().get<{ role: string; provider: string }[]>('roleProviders', []) ?? []).filter((r) => r && typeof r.role === 'string' && typeof r.provider === 'string'),
  /** team mode: how many subagents run at once (0: the runtime's default). */
  maxParallel: (): number => cfg().get<number>('team.maxParallel', 0),
  /** The Claude Code CLI ('' = look for `claude` on PATH). */
  claudePath: (): string => cfg().get<string>('claude.path', '').trim(),
};

export async function update(key: string, value: unknown): Promise<void> {
  await cfg().update(key, value, vscode.ConfigurationTarget.Global);
}
