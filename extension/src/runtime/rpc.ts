// JSON-RPC 2.0 over newline-delimited JSON (../shared/spec/protocol.md, Framing):
// one object per line, a 32 MiB cap, integer ids we own, string or integer ids the
// runtime owns (1 and "1" are different ids), $/cancelRequest in both directions.
// This file knows nothing of VS Code so it is unit-tested in plain Node.

export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ProviderError: -32001,
  ProtocolVersionMismatch: -32002,
  NotInitialized: -32003,
  NoWorkspace: -32004,
  ToolError: -32005,
  RequestCancelled: -32800,
} as const;

/** An error reply from the other side, or a local failure given a code. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** The connection ended (the process exited or the stream broke) before a reply. */
export class ConnectionClosedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ConnectionClosedError';
  }
}

export type RpcId = number | string;

interface WireMessage {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** Splits a byte stream into lines without decoding partial UTF-8 and refuses a line over the cap. */
export class LineDecoder {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes = MAX_MESSAGE_BYTES) {}

  /** Returns the complete lines in this chunk; throws when a line grows past the cap. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      const part = chunk.subarray(start, nl);
      this.checkSize(part.length);
      let line: Buffer;
      if (this.chunks.length > 0) {
        this.chunks.push(part);
        line = Buffer.concat(this.chunks, this.size + part.length);
        this.chunks = [];
        this.size = 0;
      } else {
        line = part;
      }
      lines.push(line.toString('utf8'));
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.checkSize(rest.length);
      this.chunks.push(Buffer.from(rest));
      this.size += rest.length;
    }
    return lines;
  }

  private checkSize(adding: number): void {
    if (this.size + adding > this.maxBytes) {
      this.chunks = [];
      this.size = 0;
      throw new RpcError(ErrorCodes.InvalidRequest, `a message is larger than ${this.maxBytes} bytes`);
    }
  }
}

export interface Readable {
  on(event: 'data', cb: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'close', cb: () => void): unknown;
  on(event: 'error', cb: (err: Error) => void): unknown;
}
export interface Writable {
  write(data: string): boolean;
}

export type RequestHandler = (params: unknown, signal: AbortSignal) => Promise<unknown> | unknown;
export type NotificationHandler = (params: unknown) => void;

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
  cleanup(): void;
}

const idKey = (id: RpcId): string => (typeof id === 'number' ? `n${id}` : `s${id}`);

/**
 * One JSON-RPC connection. Requests we send get integer ids from a counter;
 * replies are matched by id and type. Requests the other side sends go to the
 * handler registered for their method, with an AbortSignal that $/cancelRequest
 * fires. close() rejects everything still waiting.
 */
export class RpcConnection {
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private readonly incoming = new Map<string, AbortController>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler[]>();
  private readonly decoder: LineDecoder;
  private closedReason: string | undefined;
  private readonly closeListeners: ((reason: string) => void)[] = [];
  /** Called with every message that could not be understood (for the Output channel). */
  onProtocolError: (message: string) => void = () => {};

  constructor(
    input: Readable,
    private readonly output: Writable,
    maxBytes = MAX_MESSAGE_BYTES,
  ) {
    this.decoder = new LineDecoder(maxBytes);
    input.on('data', (chunk: Buffer) => {
      if (this.closedReason !== undefined) return;
      let lines: string[];
      try {
        lines = this.decoder.push(chunk);
      } catch (err) {
        this.close(`the runtime sent ${(err as Error).message}`);
        return;
      }
      for (const line of lines) this.handleLine(line);
    });
    input.on('end', () => this.close('the runtime closed its output'));
    input.on('close', () => this.close('the runtime closed its output'));
    input.on('error', (err: Error) => this.close(`reading from the runtime failed: ${err.message}`));
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  onClose(cb: (reason: string) => void): void {
    if (this.closedReason !== undefined) cb(this.closedReason);
    else this.closeListeners.push(cb);
  }

  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): () => void {
    const list = this.notificationHandlers.get(method) ?? [];
    list.push(handler);
    this.notificationHandlers.set(method, list);
    return () => {
      const i = list.indexOf(handler);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Sends a request; the signal sends $/cancelRequest and rejects at once with -32800. */
  request(method: string, params?: unknown, signal?: AbortSignal): Promise<unknown> {
    if (this.closedReason !== undefined) {
      return Promise.reject(new ConnectionClosedError(this.closedReason));
    }
    if (signal?.aborted) {
      return Promise.reject(new RpcError(ErrorCodes.RequestCancelled, `${method} was cancelled`));
    }
    const id = this.nextId++;
    const key = idKey(id);
    return new Promise<unknown>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.pending.has(key)) return;
        this.pending.delete(key);
        this.notify('$/cancelRequest', { id });
        reject(new RpcError(ErrorCodes.RequestCancelled, `${method} was cancelled`, { kind: 'cancelled' }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(key, {
        method,
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      });
      const msg: Record<string, unknown> = { jsonrpc: '2.0', id, method };
      if (params !== undefined) msg.params = params;
      this.send(msg);
    });
  }

  notify(method: string, params?: unknown): void {
    if (this.closedReason !== undefined) return;
    const msg: Record<string, unknown> = { jsonrpc: '2.0', method };
    if (params !== undefined) msg.params = params;
    this.send(msg);
  }

  /** Ends the connection: every waiting request fails with ConnectionClosedError. */
  close(reason: string): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    const err = new ConnectionClosedError(reason);
    for (const p of this.pending.values()) {
      p.cleanup();
      p.reject(err);
    }
    this.pending.clear();
    for (const c of this.incoming.values()) c.abort();
    this.incoming.clear();
    for (const cb of this.closeListeners.splice(0)) cb(reason);
  }

  private send(msg: Record<string, unknown>): void {
    const line = JSON.stringify(msg) + '\n';
    try {
      this.output.write(line);
    } catch (err) {
      this.close(`writing to the runtime failed: ${(err as Error).message}`);
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    let msg: WireMessage;
    try {
      msg = JSON.parse(line) as WireMessage;
    } catch {
      this.onProtocolError('the runtime sent a line that is not JSON');
      return;
    }
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) {
      this.onProtocolError('the runtime sent a message that is not an object');
      return;
    }
    const hasId = typeof msg.id === 'number' || typeof msg.id === 'string';
    if (typeof msg.method === 'string') {
      if (hasId) void this.handleRequest(msg.id as RpcId, msg.method, msg.params);
      else this.handleNotification(msg.method, msg.params);
      return;
    }
    if (!hasId) {
      this.onProtocolError('the runtime sent a reply without an id');
      return;
    }
    const key = idKey(msg.id as RpcId);
    const p = this.pending.get(key);
    if (!p) return; // a reply to a request we cancelled, or unknown: ignored
    this.pending.delete(key);
    p.cleanup();
    if (msg.error && typeof msg.error === 'object') {
      const code = typeof msg.error.code === 'number' ? msg.error.code : ErrorCodes.InternalError;
      const message = typeof msg.error.message === 'string' ? msg.error.message : 'unknown error';
      p.reject(new RpcError(code, message, msg.error.data));
    } else {
      p.resolve(msg.result);
    }
  }

  private handleNotification(method: string, params: unknown): void {
    if (method === '$/cancelRequest') {
      const id = (params as { id?: unknown } | undefined)?.id;
      if (typeof id === 'number' || typeof id === 'string') this.incoming.get(idKey(id))?.abort();
      return;
    }
    for (const h of this.notificationHandlers.get(method) ?? []) {
      try {
        h(params);
      } catch (err) {
        this.onProtocolError(`a handler of ${method} failed: ${(err as Error).message}`);
      }
    }
  }

  private async handleRequest(id: RpcId, method: string, params: unknown): Promise<void> {
    const handler = this.requestHandlers.get(method);
    if (!handler) {
      this.send({ jsonrpc: '2.0', id, error: { code: ErrorCodes.MethodNotFound, message: `unknown method ${method}` } });
      return;
    }
    const key = idKey(id);
    const controller = new AbortController();
    this.incoming.set(key, controller);
    try {
      const result = await handler(params, controller.signal);
      if (this.incoming.get(key) !== controller) return;
      if (controller.signal.aborted) {
        // Cancelled by the runtime: still answered (it ignores the reply), as -32800.
        this.send({ jsonrpc: '2.0', id, error: { code: ErrorCodes.RequestCancelled, message: `${method} was cancelled`, data: { kind: 'cancelled' } } });
        return;
      }
      this.send({ jsonrpc: '2.0', id, result: result === undefined ? null : result });
    } catch (err) {
      if (this.incoming.get(key) !== controller) return;
      const code = err instanceof RpcError ? err.code : ErrorCodes.InternalError;
      this.send({ jsonrpc: '2.0', id, error: { code, message: (err as Error).message } });
    } finally {
      if (this.incoming.get(key) === controller) this.incoming.delete(key);
    }
  }
}
