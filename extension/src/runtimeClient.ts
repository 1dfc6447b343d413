// The runtime seen from VS Code: which binary (the bundled one, or the
// taskX.runtime.path setting), its data folder in the extension's global
// storage, stderr into the "task-x" Output channel at the taskX.runtime.logLevel
// level, a notice when it crashed and was restarted, and shutdown + exit on
// deactivate.
import { accessSync, chmodSync, constants, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { settings } from './config';
import { RuntimeProcess, type CrashInfo, type RuntimeState } from './runtime/process';
import type { RequestHandler, NotificationHandler } from './runtime/rpc';
import type {
  ClientNotifications,
  NotificationMethod,
  RequestArgs,
  RequestMethod,
  ResultOf,
  ServerNotificationHandler,
  ServerNotificationMethod,
  ServerRequestHandler,
  ServerRequestMethod,
} from './protocol';

export class RuntimeClient implements vscode.Disposable {
  readonly process: RuntimeProcess;
  private readonly stateEmitter = new vscode.EventEmitter<RuntimeState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly readyEmitter = new vscode.EventEmitter<void>();
  /** Fires after every initialize, the first and each one after a restart. */
  readonly onDidBecomeReady = this.readyEmitter.event;
  private readonly crashEmitter = new vscode.EventEmitter<CrashInfo>();
  readonly onDidCrash = this.crashEmitter.event;
  /** Milliseconds from construction to the first initialize result (the activation figure). */
  firstReadyMs: number | undefined;
  private readonly created = Date.now();

  constructor(
    context: vscode.ExtensionContext,
    private readonly output: vscode.OutputChannel,
  ) {
    const dataDir = context.globalStorageUri.fsPath;
    mkdirSync(dataDir, { recursive: true });
    const binary = RuntimeClient.binary(context);
    this.output.appendLine(`[task-x] runtime ${binary}, data ${dataDir}`);
    this.process = new RuntimeProcess({
      binary,
      dataDir,
      clientName: 'task-x-vscode',
      clientVersion: String(context.extension.packageJSON.version ?? '0.0.0'),
      logLevel: settings.logLevel(),
      sandbox: settings.sandbox(),
      env: RuntimeClient.env(),
      onStderr: (line) => this.output.appendLine(line),
    });
    this.process.onState((s) => this.stateEmitter.fire(s));
    this.process.onReady(() => {
      if (this.firstReadyMs === undefined) this.firstReadyMs = Date.now() - this.created;
      this.readyEmitter.fire();
    });
    this.process.onCrash((info) => {
      this.output.appendLine(`[task-x] the runtime ended unexpectedly (${info.reason})${info.restarting ? '; restarting it' : ''}`);
      this.crashEmitter.fire(info);
      if (info.restarting) {
        void vscode.window.showWarningMessage(`task-x: the runtime stopped (${info.reason}) and was restarted; a task it was running is shown as failed.`);
      } else {
        void vscode.window.showErrorMessage(this.process.failure?.message ?? 'task-x: the runtime keeps stopping.', 'Restart Runtime', 'Show Log').then((a) => {
          if (a === 'Restart Runtime') void vscode.commands.executeCommand('taskX.restartRuntime');
          if (a === 'Show Log') this.output.show();
        });
      }
    });
  }

  /** The binary: the taskX.runtime.path setting (machine scope), else the one in the .vsix. */
  static binary(context: vscode.ExtensionContext): string {
    const custom = settings.runtimePath();
    if (custom) return custom;
    const bundled = join(context.extensionPath, 'bin', 'task-x-runtime');
    if (!existsSync(bundled)) return 'task-x-runtime';
    try {
      accessSync(bundled, constants.X_OK);
    } catch {
      // An unzip that dropped the mode bits: the binary is ours, make it runnable again.
      chmodSync(bundled, 0o755);
    }
    return bundled;
  }

  /** The runtime's environment: ours without VS Code's own variables it has no use for. */
  static env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (k.startsWith('VSCODE_') || k === 'ELECTRON_RUN_AS_NODE') continue;
      env[k] = v;
    }
    return env;
  }

  get state(): RuntimeState {
    return this.process.state;
  }

  start(): Promise<unknown> {
    return this.process.start().then(() => this.process.initializeResult);
  }

  /** A request of protocol.md, typed by the generated method map. */
  request<M extends RequestMethod>(method: M, ...args: RequestArgs<M>): Promise<ResultOf<M>> {
    const [params, signal] = args;
    return this.process.request(method, params, signal) as Promise<ResultOf<M>>;
  }

  notify<M extends NotificationMethod>(method: M, params: ClientNotifications[M]['params']): void {
    this.process.notify(method, params);
  }

  /** Answers a runtime→client request. The params come from the runtime: handlers still check what they use. */
  onRequest<M extends ServerRequestMethod>(method: M, handler: ServerRequestHandler<M>): void {
    this.process.onRequest(method, handler as RequestHandler);
  }

  onNotification<M extends ServerNotificationMethod>(method: M, handler: ServerNotificationHandler<M>): void {
    this.process.onNotification(method, handler as NotificationHandler);
  }

  async restart(): Promise<void> {
    await this.process.restart();
  }

  dispose(): void {
    void this.process.stop();
  }

  /** deactivate: shutdown and exit, waiting for the process to end. */
  stop(): Promise<void> {
    return this.process.stop();
  }
}
