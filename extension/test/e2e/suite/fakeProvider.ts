// A scripted OpenAI-compatible model server for the e2e tests, replaying the
// documented Chat Completions streaming format (data: chunk lines, tool call
// arguments split across chunks, a usage chunk, data: [DONE]), as the Go
// end-to-end tests' fake does. Each POST takes the next step of the script.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Step {
  text?: string;
  calls?: { name: string; input: Record<string, unknown> }[];
  /** Holds the response until the client goes away (a model that never answers). */
  hang?: boolean;
  /** Holds the response until this promise settles. */
  gate?: Promise<unknown>;
  /** The text as these exact deltas (instead of 7-character pieces of `text`). */
  chunks?: string[];
  /** A pause between text deltas, to time each one on its own. */
  chunkDelayMs?: number;
  /** Answers with this HTTP status and an error body instead (400: a request the API refuses, not retried). */
  status?: number;
}

export class FakeProvider {
  private server: Server | undefined;
  private script: Step[] = [];
  readonly requests: Record<string, unknown>[] = [];
  private waiters: (() => void)[] = [];
  private hangWaiters: (() => void)[] = [];
  /** How many held (hang) responses the client closed. */
  hangsClosed = 0;
  url = '';

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this.url;
  }

  /** Replaces what the next requests get. */
  play(...steps: Step[]): void {
    this.script = steps;
  }

  /** Resolves when at least n chat requests arrived in all. */
  async requestCount(n: number, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < n) {
      if (Date.now() > deadline) throw new Error(`the model got ${this.requests.length} of ${n} requests`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 1000);
      });
    }
  }

  /** Resolves once the client closed n held responses in all (the runtime stopped waiting for the model). */
  hangClosed(n: number): Promise<void> {
    if (this.hangsClosed >= n) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (this.hangsClosed >= n ? resolve() : this.hangWaiters.push(check));
      this.hangWaiters.push(check);
    });
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.server?.closeAllConnections();
      this.server?.close(() => r());
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const c of req) body += c;
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model', context_length: 32768 }, { id: 'fake-model-large', object: 'model', context_length: 131072 }] }));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end('{"error":{"message":"not found"}}');
      return;
    }
    const parsed = JSON.parse(body) as Record<string, unknown>;
    this.requests.push(parsed);
    for (const w of this.waiters.splice(0)) w();
    const step = this.script.shift();
    if (!step) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"script exhausted"}}');
      return;
    }
    if (step.status) {
      res.writeHead(step.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'the fake refuses this request', type: 'invalid_request_error' } }));
      return;
    }
    if (step.hang) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }, null))}\n\n`);
      await new Promise<void>((r) => req.socket.once('close', () => r()));
      this.hangsClosed++;
      for (const w of this.hangWaiters.splice(0)) w();
      return;
    }
    if (step.gate) await step.gate;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (obj: unknown) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
    send(chunk({ role: 'assistant', content: '' }, null));
    const parts = step.chunks ?? (step.text ? split(step.text) : []);
    for (const part of parts) {
      send(chunk({ content: part }, null));
      if (step.chunkDelayMs) await new Promise((r) => setTimeout(r, step.chunkDelayMs));
    }
    (step.calls ?? []).forEach((c, i) => {
      const args = JSON.stringify(c.input);
      const half = Math.floor(args.length / 2);
      send(chunk({ tool_calls: [{ index: i, id: `call_${this.requests.length}_${i}`, type: 'function', function: { name: c.name, arguments: args.slice(0, half) } }] }, null));
      send(chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] }, null));
    });
    send(chunk({}, step.calls && step.calls.length > 0 ? 'tool_calls' : 'stop'));
    send({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: Math.ceil(body.length / 4), completion_tokens: 10, total_tokens: Math.ceil(body.length / 4) + 10 } });
    res.end('data: [DONE]\n\n');
  }
}

function chunk(delta: Record<string, unknown>, finish: string | null) {
  return { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] };
}

function split(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += 7) out.push(text.slice(i, i + 7));
  return out;
}

/** The text of every message of a chat request, for asserting what the model was sent. */
export function transcript(req: Record<string, unknown>): string {
  return JSON.stringify(req.messages ?? []);
}
