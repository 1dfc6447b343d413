// The task-x-runtime process: spawn, initialize, restart after a crash, and the
// orderly shutdown + exit (protocol.md, Lifecycle). Knows nothing of VS Code so
// the unit tests drive it against the real binary in plain Node.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ConnectionClosedError, ErrorCodes, RpcConnection, RpcError, type NotificationHandler, type RequestHandler } from './rpc';

export const CLIENT_PROTOCOL_VERSION = 1;

export type RuntimeState = 'stopped' | 'starting' | 'ready' | 'restarting' | 'failed';

export interface RuntimeOptions {
  /** Absolute path of the task-x-runtime binary. */
  binary: string;
  /** Where task files and checkpoints live (initialize.dataDir). */
  dataDir: string;
  clientName: string;
  clientVersion: string;
  /** TASK_X_LOG for the process: error, warn, info, debug or trace. */
  logLevel: string;
  /** initialize.sandbox; the runtime's default (true) when undefined. */
  sandbox?: boolean;
  /** The environment of the process (defaults to this one's). */
  env?: NodeJS.ProcessEnv;
  /** Each line the runtime writes to stderr. */
  onStderr?: (line: string) => void;
  /** How many crashes in `restartWindowMs` are restarted before giving up. */
  maxRestarts?: number;
  restartWindowMs?: number;
}

/** The runtime speaks another protocol version: one sentence the user can act on. */
export class ProtocolMismatchError extends Error {
  constructor(
    readonly serverVersion: unknown,
    binary: string,
  ) {
    super(
      `The task-x runtime at ${binary} speaks protocol version ${String(serverVersion)} but this extension speaks version ${CLIENT_PROTOCOL_VERSION}; install a runtime from the same release as the extension (or clear the taskX.runtime.path setting to use the bundled one).`,
    );
    this.name = 'ProtocolMismatchError';
  }
}

export interface CrashInfo {
  /** What ended the process, in words: "exit code 2", "signal SIGKILL". */
  reason: string;
  /** Whether a new process is being started. */
  restarting: boolean;
  /** The last lines of stderr, for the Output channel and the notice. */
  stderrTail: string[];
}

type Listener<T> = (value: T) => void;

/**
 * Owns at most one runtime process at a time. Handlers registered here are put on
 * every new connection, so a restart keeps answering approvals and receiving
 * events. `request` waits for a ready connection; a request in flight when the
 * process dies fails with ConnectionClosedError.
 */
export class RuntimeProcess {
  private child: ChildProcessWithoutNullStreams | undefined;
  private conn: RpcConnection | undefined;
  private stateValue: RuntimeState = 'stopped';
  private ready: Promise<RpcConnection> | undefined;
  private stopping = false;
  private crashes: number[] = [];
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers: [string, NotificationHandler][] = [];
  private readonly stateListeners: Listener<RuntimeState>[] = [];
  private readonly crashListeners: Listener<CrashInfo>[] = [];
  private readonly readyListeners: Listener<unknown>[] = [];
  private stderrTail: string[] = [];
  /** The initialize result of the current process. */
  initializeResult: unknown;
  /** The reason the runtime is in state "failed". */
  failure: Error | undefined;
  /** The pid of the current process (tests kill it to simulate a crash). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  constructor(private readonly options: RuntimeOptions) {}

  get state(): RuntimeState {
    return this.stateValue;
  }

  onState(cb: Listener<RuntimeState>): void {
    this.stateListeners.push(cb);
  }
  onCrash(cb: Listener<CrashInfo>): void {
    this.crashListeners.push(cb);
  }
  /** After every successful initialize (the first start and each restart). */
  onReady(cb: Listener<unknown>): void {
    this.readyListeners.push(cb);
  }

  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
    this.conn?.onRequest(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.notificationHandlers.push([method, handler]);
    this.conn?.onNotification(method, handler);
  }

  /** Starts the process (once) and resolves with the connection after initialize. */
  start(): Promise<RpcConnection> {
    if (this.ready) return this.ready;
    this.stopping = false;
    this.failure = undefined;
    this.setState(this.stateValue === 'restarting' ? 'restarting' : 'starting');
    this.ready = this.launch();
    this.ready.catch(() => undefined);
    return this.ready;
  }

  async request(method: string, params?: unknown, signal?: AbortSignal): Promise<unknown> {
    const conn = await this.start();
    return conn.request(method, params, signal);
  }

  /** Sends a notification when a process is ready; dropped otherwise (it was about state the next process rebuilds). */
  notify(method: string, params?: unknown): void {
    if (this.stateValue === 'ready') this.conn?.notify(method, params);
  }

  private setState(s: RuntimeState): void {
    if (this.stateValue === s) return;
    this.stateValue = s;
    for (const l of this.stateListeners) l(s);
  }

  private async launch(): Promise<RpcConnection> {
    const { binary } = this.options;
    const env = { ...(this.options.env ?? process.env), TASK_X_LOG: this.options.logLevel };
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.child = child;
    this.stderrTail = [];
    const conn = new RpcConnection(child.stdout, child.stdin);
    this.conn = conn;
    for (const [m, h] of this.requestHandlers) conn.onRequest(m, h);
    for (const [m, h] of this.notificationHandlers) conn.onNotification(m, h);
    conn.onProtocolError = (msg) => this.options.onStderr?.(`[task-x] ${msg}`);

    let stderrBuf = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (s: string) => {
      stderrBuf += s;
      let nl: number;
      while ((nl = stderrBuf.indexOf('\n')) >= 0) {
        const line = stderrBuf.slice(0, nl);
        stderrBuf = stderrBuf.slice(nl + 1);
        this.stderrTail.push(line);
        if (this.stderrTail.length > 20) this.stderrTail.shift();
        this.options.onStderr?.(line);
      }
    });
    child.stdin.on('error', () => undefined); // EPIPE after a crash: the exit handler reports it

    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => reject(err));
    });
    child.once('exit', (code, signal) => this.exited(child, conn, code, signal));

    try {
      await spawned;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why = e.code === 'ENOENT' ? 'there is no file there' : e.code === 'EACCES' ? 'it is not executable' : e.message;
      throw this.fail(new Error(`The task-x runtime could not be started from ${binary}: ${why}.`));
    }

    const params: Record<string, unknown> = {
      protocolVersion: CLIENT_PROTOCOL_VERSION,
      clientInfo: { name: this.options.clientName, version: this.options.clientVersion },
      dataDir: this.options.dataDir,
    };
    if (this.options.sandbox !== undefined) params.sandbox = this.options.sandbox;
    try {
      this.initializeResult = await conn.request('initialize', params);
    } catch (err) {
      if (err instanceof RpcError && err.code === ErrorCodes.ProtocolVersionMismatch) {
        const server = (err.data as { serverProtocolVersion?: unknown } | undefined)?.serverProtocolVersion;
        this.stopping = true;
        child.kill('SIGKILL');
        throw this.fail(new ProtocolMismatchError(server, binary));
      }
      if (err instanceof ConnectionClosedError) throw err; // the exit handler restarts or fails
      this.stopping = true;
      child.kill('SIGKILL');
      throw this.fail(new Error(`The task-x runtime refused to initialize: ${(err as Error).message}`));
    }
    this.setState('ready');
    for (const l of this.readyListeners) l(this.initializeResult);
    return conn;
  }

  private fail(err: Error): Error {
    this.failure = err;
    this.ready = undefined;
    this.setState('failed');
    return err;
  }

  private exited(child: ChildProcessWithoutNullStreams, conn: RpcConnection, code: number | null, signal: NodeJS.Signals | null): void {
    const reason = signal ? `signal ${signal}` : `exit code ${code}`;
    conn.close(`the task-x runtime ended (${reason})`);
    if (this.child !== child) return;
    this.child = undefined;
    this.conn = undefined;
    if (this.stopping) {
      this.ready = undefined;
      if (this.stateValue !== 'failed') this.setState('stopped');
      return;
    }
    const now = Date.now();
    const windowMs = this.options.restartWindowMs ?? 60_000;
    this.crashes = this.crashes.filter((t) => now - t < windowMs);
    this.crashes.push(now);
    const restarting = this.crashes.length <= (this.options.maxRestarts ?? 3);
    const info: CrashInfo = { reason, restarting, stderrTail: [...this.stderrTail] };
    this.ready = undefined;
    if (restarting) {
      this.setState('restarting');
      for (const l of this.crashListeners) l(info);
      const delay = 100 * (this.crashes.length - 1);
      setTimeout(() => {
        if (!this.stopping && !this.ready) this.start().catch(() => undefined);
      }, delay);
    } else {
      this.fail(new Error(`The task-x runtime stopped ${this.crashes.length} times in a minute (last: ${reason}); it is not restarted again until you run "task-x: Restart Runtime".`));
      for (const l of this.crashListeners) l(info);
    }
  }

  /** Forgets the crash count and starts again (the Restart Runtime command). */
  async restart(): Promise<RpcConnection> {
    await this.stop();
    this.crashes = [];
    return this.start();
  }

  /**
   * shutdown, then exit, then waits up to `graceMs` for the process to end before
   * SIGKILL (protocol.md: the runtime waits up to 5 s for open replies).
   */
  async stop(graceMs = 6000): Promise<void> {
    this.stopping = true;
    const child = this.child;
    const conn = this.conn;
    if (!child) {
      this.ready = undefined;
      if (this.stateValue !== 'failed') this.setState('stopped');
      return;
    }
    const gone = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    if (conn && !conn.closed) {
      const timeout = new Promise((r) => setTimeout(r, Math.min(graceMs, 2000)));
      await Promise.race([conn.request('shutdown').catch(() => undefined), timeout]);
      conn.notify('exit');
    }
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  }
}
