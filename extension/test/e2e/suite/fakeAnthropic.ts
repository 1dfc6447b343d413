// A scripted Anthropic Messages API for the real Claude Code CLI in the e2e
// tests (the CLI reads ANTHROPIC_BASE_URL, which test/e2e/run.mjs points at
// TASK_X_E2E_ANTHROPIC_PORT), as the runtime's own claudecode tests do: the
// main conversation's requests (those that carry tools) get the script in
// order, side requests (titles, summaries) a short text; answers stream as SSE.
import { createServer, type Server } from 'node:http';

export interface Turn {
  text?: string;
  calls?: { name: string; input: Record<string, unknown> }[];
}

export class FakeAnthropic {
  private server: Server | undefined;
  private script: Turn[] = [];
  readonly requests: Record<string, unknown>[] = [];

  start(port: number): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"not_found_error","message":"not here"}}');
          return;
        }
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(body) as Record<string, unknown>;
        } catch {
          res.writeHead(400).end('{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}');
          return;
        }
        let turn: Turn = { text: 'Side request.' };
        let n = -1;
        if (Array.isArray(parsed.tools) && parsed.tools.length > 0) {
          n = this.requests.length;
          this.requests.push(parsed);
          turn = this.script.shift() ?? { text: 'done.' };
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const ev = (name: string, data: Record<string, unknown>) => res.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
        ev('message_start', { message: { id: `msg_${n + 2}`, type: 'message', role: 'assistant', content: [], model: 'claude-fake-1', stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } } });
        let idx = 0;
        if (turn.text) {
          ev('content_block_start', { index: idx, content_block: { type: 'text', text: '' } });
          ev('content_block_delta', { index: idx, delta: { type: 'text_delta', text: turn.text } });
          ev('content_block_stop', { index: idx });
          idx++;
        }
        (turn.calls ?? []).forEach((c, i) => {
          ev('content_block_start', { index: idx, content_block: { type: 'tool_use', id: `toolu_${n}_${i}`, name: c.name, input: {} } });
          ev('content_block_delta', { index: idx, delta: { type: 'input_json_delta', partial_json: JSON.stringify(c.input) } });
          ev('content_block_stop', { index: idx });
          idx++;
        });
        ev('message_delta', { delta: { stop_reason: turn.calls?.length ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } });
        ev('message_stop', {});
        res.end();
      });
    });
    return new Promise((r) => this.server!.listen(port, '127.0.0.1', () => r()));
  }

  play(...turns: Turn[]): void {
    this.script = turns;
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.server?.closeAllConnections();
      this.server?.close(() => r());
    });
  }
}
