// Hooks, MCP servers and skills (issue 36 items 7, 8 and 15), under VS Code's
// workspace trust:
//  - the user's hooks (setting taskX.hooks, Claude Code's hooks object) go to
//    config/hooks; the workspace's own .task-x/hooks.json is loaded by the
//    runtime only when `workspaceTrusted` is true;
//  - the user's MCP servers (setting taskX.mcp.servers, VS Code's or Claude
//    Code's server shape) go to mcp/configure; the workspace's .vscode/mcp.json
//    and .mcp.json servers are started by the runtime only when trusted;
//  - skills come from skills/list; in an untrusted workspace the workspace's
//    own skills are left out of completion and of what the Claude Code engine gets.
// Both settings are application-scoped (a workspace cannot set them: a hook or
// a server is a command run on the user's machine). `workspaceTrusted` is
// vscode.workspace.isTrusted, sent again when the user grants trust.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { describeError } from './errors';
import type { ConfigHooksResult, HooksConfig, MCPServerConfig, MCPServerStatus, Skill } from './protocol';
import type { RuntimeClient } from './runtimeClient';
import type { WorkspaceManager } from './workspace';

/** The Claude Code CLI: the setting when it names a file, else `claude` on PATH; '' when there is none. */
export function findClaude(setting: string, envPath = process.env.PATH ?? ''): string {
  const isExe = (p: string) => {
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return fs.statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (setting) return isExe(setting) ? setting : '';
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, 'claude');
    if (isExe(p)) return p;
  }
  return '';
}

/** The user's hooks from settings, as config/hooks takes them (an object of event → groups); {} when unset or not an object. */
export function userHooks(raw: unknown): HooksConfig {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  return raw as HooksConfig;
}

/** The user's MCP servers from settings: name → server; entries that are not objects are dropped. */
export function userServers(raw: unknown): Record<string, MCPServerConfig> {
  const out: Record<string, MCPServerConfig> = {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [name, v] of Object.entries(raw as Record<string, unknown>)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && name !== 'task-x') out[name] = v as MCPServerConfig;
  }
  return out;
}

/** Whether a skill comes from the workspace (not the user's home): such skills are used only in trusted workspaces. */
export function isWorkspaceSkill(s: Skill, root: string | undefined): boolean {
  if (s.source === 'workspace') return true;
  if (!root || !s.path) return false;
  const rel = path.relative(root, s.path);
  return !rel.startsWith('..') && !path.isAbsolute(rel);
}

export class Integrations implements vscode.Disposable {
  /** mcp/configure or mcp/status's latest answer. */
  servers: MCPServerStatus[] = [];
  /** config/hooks's latest answer. */
  hooks: ConfigHooksResult | undefined;
  skills: Skill[] = [];
  /** The last error of a sync, in plain words. */
  lastError: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  /** A sync or a status refresh finished. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private syncing: Promise<void> | undefined;
  private again = false;
  private opened = false;
  private skillsTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runtime: RuntimeClient,
    private readonly workspace: WorkspaceManager,
    private readonly log: (line: string) => void,
  ) {
    this.disposables.push(
      // The runtime forgets its configuration when it restarts: configure it again.
      runtime.onDidBecomeReady(() => {
        this.opened = false;
        void this.sync();
      }),
      workspace.onDidChange(() => {
        // The workspace's hooks and servers are read from the open project.
        if (!this.opened && (workspace.phase === 'ready' || workspace.phase === 'updated')) {
          this.opened = true;
          void this.sync();
        }
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.sync()),
      // A skill added, changed or removed in the workspace: list them again.
      workspace.onDidChangeFiles((paths) => {
        // A new folder may be reported alone (its files not one by one): any path in or of .task-x or .claude counts.
        if (!paths.some((p) => /[\\/]\.(task-x|claude)([\\/]|$)/.test(p))) return;
        if (this.skillsTimer) clearTimeout(this.skillsTimer);
        this.skillsTimer = setTimeout(() => {
          this.skillsTimer = undefined;
          void this.refreshSkills().then(() => this.changed.fire());
        }, 100);
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('taskX.hooks') || e.affectsConfiguration('taskX.mcp')) void this.sync();
      }),
    );
  }

  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  /** Sends config/hooks and mcp/configure with the settings and the trust; refreshes skills. Coalesces calls. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    this.syncing = (async () => {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again);
    })().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async syncOnce(): Promise<void> {
    if (this.runtime.state !== 'ready') return;
    const cfg = vscode.workspace.getConfiguration('taskX');
    const trusted = this.trusted;
    this.lastError = undefined;
    try {
      this.hooks = await this.runtime.request('config/hooks', { hooks: userHooks(cfg.get('hooks')), workspaceTrusted: trusted });
      if (this.hooks.workspaceError) this.log(`[task-x] the workspace's hooks were not used: ${this.hooks.workspaceError}`);
    } catch (err) {
      this.lastError = `Hooks: ${describeError(err)}`;
      this.log(`[task-x] config/hooks: ${describeError(err)}`);
    }
    try {
      const st = await this.runtime.request('mcp/configure', { servers: userServers(cfg.get('mcp.servers')), workspaceTrusted: trusted });
      this.servers = st.servers ?? [];
    } catch (err) {
      this.lastError = `MCP: ${describeError(err)}`;
      this.log(`[task-x] mcp/configure: ${describeError(err)}`);
    }
    await this.refreshSkills();
    this.changed.fire();
  }

  async refreshStatus(): Promise<void> {
    try {
      this.servers = (await this.runtime.request('mcp/status')).servers ?? [];
    } catch (err) {
      this.log(`[task-x] mcp/status: ${describeError(err)}`);
    }
    this.changed.fire();
  }

  async refreshSkills(): Promise<void> {
    try {
      const r = await this.runtime.request('skills/list');
      const root = this.workspace.folder?.uri.fsPath;
      this.skills = (r.skills ?? []).filter((s) => this.trusted || !isWorkspaceSkill(s, root));
      for (const e of r.errors ?? []) this.log(`[task-x] skill ${e.path} did not load: ${e.message}`);
    } catch (err) {
      this.log(`[task-x] skills/list: ${describeError(err)}`);
    }
  }

  dispose(): void {
    if (this.skillsTimer) clearTimeout(this.skillsTimer);
    for (const d of this.disposables) d.dispose();
  }
}

type McpNode = { kind: 'server'; s: MCPServerStatus } | { kind: 'tool'; name: string } | { kind: 'error'; text: string };

/** The MCP view: each server with its state (running, stopped, disabled, failed with its error) and its tools. */
export class McpTree implements vscode.TreeDataProvider<McpNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly integrations: Integrations) {
    integrations.onDidChange(() => this.changed.fire());
  }

  getChildren(n?: McpNode): McpNode[] {
    if (!n) {
      const out: McpNode[] = this.integrations.servers.map((s) => ({ kind: 'server' as const, s }));
      if (this.integrations.lastError) out.unshift({ kind: 'error', text: this.integrations.lastError });
      return out;
    }
    if (n.kind === 'server') return [...(n.s.error ? [{ kind: 'error' as const, text: n.s.error }] : []), ...n.s.tools.map((t) => ({ kind: 'tool' as const, name: t }))];
    return [];
  }

  getTreeItem(n: McpNode): vscode.TreeItem {
    if (n.kind === 'tool') {
      const item = new vscode.TreeItem(n.name);
      item.iconPath = new vscode.ThemeIcon('tools');
      return item;
    }
    if (n.kind === 'error') {
      const item = new vscode.TreeItem(n.text);
      item.iconPath = new vscode.ThemeIcon('error');
      item.tooltip = n.text;
      return item;
    }
    const s = n.s;
    const state = s.disabled ? 'disabled' : s.running ? 'running' : s.error ? 'failed' : s.state || 'stopped';
    const item = new vscode.TreeItem(s.name, s.tools.length > 0 || s.error ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = `mcp:${s.name}`;
    item.description = `${state} · ${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}${s.workspace ? ' · workspace' : ''}`;
    item.tooltip = `${s.name}: ${s.command}\n${state}${s.error ? `\n${s.error}` : ''}`;
    item.iconPath = new vscode.ThemeIcon(s.running ? 'pass' : s.disabled ? 'circle-slash' : s.error ? 'error' : 'circle-outline');
    return item;
  }
}
