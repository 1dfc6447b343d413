// The ACP e2e client (internal/e2e TestACPClient): the official ACP SDK
// client (@agentclientprotocol/sdk, from $TASK_X_ACP_NPM) drives
// `task-x-runtime --acp` ($ACP_AGENT) in the git repository $ACP_CWD, and
// every message, both ways, is validated with ajv against the SDK's
// schema/v1/schema.json: the whole message against the schema's root,
// and params, results and errors against their method's definitions.
// It prints a JSON report on stdout; any failed check exits 1.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Readable, Transform, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { pathToFileURL } from "node:url";

const npm = process.env.TASK_X_ACP_NPM;
const agentBin = process.env.ACP_AGENT;
const cwd = process.env.ACP_CWD;
const load = (p) => import(pathToFileURL(path.join(npm, "node_modules", p)).href);
const acp = await load("@agentclientprotocol/sdk/dist/v1/stable/acp.js");
const { default: Ajv2020 } = await load("ajv/dist/2020.js");
const schema = JSON.parse(fs.readFileSync(path.join(npm, "node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"), "utf8"));
const { methods } = acp;

// --- validation of every message -------------------------------------
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema(schema, "acp");
const rootSchema = ajv.getSchema("acp");
const defs = {};
for (const [name, def] of Object.entries(schema.$defs)) {
  if (!def["x-method"]) continue;
  const kind = name.endsWith("Response") ? "response" : name.endsWith("Notification") ? "notification" : "request";
  defs[`${kind} ${def["x-method"]}`] = ajv.getSchema(`acp#/$defs/${name}`);
}
const errorSchema = ajv.getSchema("acp#/$defs/Error");
const failures = [];
const report = { validated: 0, methods: {}, updates: {} };
const pending = { "agent→client": new Map(), "client→agent": new Map() };

function fail(msg) {
  failures.push(msg);
  process.stderr.write(`FAIL: ${msg}\n`);
}
function assert(cond, msg) {
  if (!cond) fail(msg);
}
function errs(v) {
  return JSON.stringify(v.errors ?? []).slice(0, 1500);
}

function check(dir, msg) {
  report.validated++;
  const short = JSON.stringify(msg).slice(0, 400);
  if (!rootSchema(msg)) fail(`${dir}: not an ACP message: ${short} ${errs(rootSchema)}`);
  if (msg.method !== undefined) {
    const kind = msg.id !== undefined ? "request" : "notification";
    report.methods[msg.method] = (report.methods[msg.method] ?? 0) + 1;
    if (msg.method === "session/update") {
      const u = msg.params?.update?.sessionUpdate;
      report.updates[u] = (report.updates[u] ?? 0) + 1;
    }
    const v = defs[`${kind} ${msg.method}`];
    if (!v) fail(`${dir}: ${kind} ${msg.method} is not in the schema`);
    else if (!v(msg.params ?? {})) fail(`${dir}: ${msg.method} params: ${short} ${errs(v)}`);
    if (kind === "request") pending[dir].set(JSON.stringify(msg.id), msg.method);
    return;
  }
  const other = dir === "agent→client" ? "client→agent" : "agent→client";
  const method = pending[other].get(JSON.stringify(msg.id));
  pending[other].delete(JSON.stringify(msg.id));
  if (!method) return fail(`${dir}: a response to no request: ${short}`);
  if (msg.error) {
    if (!errorSchema(msg.error)) fail(`${dir}: ${method} error: ${short} ${errs(errorSchema)}`);
    return;
  }
  const v = defs[`response ${method}`];
  if (!v) fail(`${dir}: no response schema for ${method}`);
  else if (!v(msg.result)) fail(`${dir}: ${method} result: ${short} ${errs(v)}`);
}

// lineTap passes bytes through and validates each line it sees.
function lineTap(dir) {
  const dec = new StringDecoder("utf8");
  let buf = "";
  return new Transform({
    transform(chunk, _enc, cb) {
      buf += dec.write(chunk);
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (!line.trim()) continue;
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          fail(`${dir}: not JSON: ${line.slice(0, 200)}`);
          continue;
        }
        check(dir, msg);
      }
      cb(null, chunk);
    },
  });
}

// --- the client --------------------------------------------------------
const updates = []; // session/update params, in order
const waiters = [];
let onPermission = async () => ({ outcome: { outcome: "cancelled" } });
const permissions = []; // session/request_permission params
const fsReads = []; // fs/read_text_file paths
const fsWrites = []; // fs/write_text_file params
const elicitations = []; // elicitation/create params
// The editor's unsaved buffers by absolute path; other files are read from the disk.
const buffers = new Map([[path.join(cwd, "src/buffer.txt"), "unsaved buffer text\n"]]);

function waitUpdate(from, pred) {
  for (let i = from; i < updates.length; i++) if (pred(updates[i])) return Promise.resolve(updates[i]);
  return new Promise((resolve) => waiters.push({ pred, resolve, from }));
}
function since(from, sessionId, kind) {
  return updates.slice(from).filter((u) => u.sessionId === sessionId && (!kind || u.update.sessionUpdate === kind));
}
const text = (us) => us.map((u) => u.update.content?.text ?? "").join("");

const app = acp
  .client({ name: "task-x-e2e" })
  .onNotification(methods.client.session.update, async (c) => {
    updates.push(c.params);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i].pred(c.params)) {
        waiters[i].resolve(c.params);
        waiters.splice(i, 1);
      }
    }
  })
  .onRequest(methods.client.session.requestPermission, async (c) => {
    permissions.push(c.params);
    return onPermission(c.params, c);
  })
  .onRequest(methods.client.elicitation.create, async (c) => {
    elicitations.push(c.params);
    return { action: "accept", content: { color: "Blue", parts: ["a", "c"] } };
  })
  .onRequest(methods.client.fs.readTextFile, async (c) => {
    fsReads.push(c.params.path);
    return { content: buffers.get(c.params.path) ?? fs.readFileSync(c.params.path, "utf8") };
  })
  .onRequest(methods.client.fs.writeTextFile, async (c) => {
    fsWrites.push(c.params);
    buffers.set(c.params.path, c.params.content);
    return {};
  });

function startAgent() {
  const child = spawn(agentBin, ["--acp"], { cwd, stdio: ["pipe", "pipe", "inherit"], env: process.env });
  const toAgent = lineTap("client→agent");
  toAgent.pipe(child.stdin);
  const fromAgent = child.stdout.pipe(lineTap("agent→client"));
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  return { stream: acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(fromAgent)), toAgent, exited };
}

async function stop(agent) {
  agent.toAgent.end();
  const code = await agent.exited;
  assert(code === 0, `the runtime exited with ${code}`);
}

const say = (sessionId, prompt) => ({ sessionId, prompt: [{ type: "text", text: prompt }] });
const option = (id) => async () => ({ outcome: { outcome: "selected", optionId: id } });
let helloSession;

// First runtime: everything but load.
const first = startAgent();
await app.connectWith(first.stream, async (agent) => {
  const init = await agent.request(methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false, elicitation: { form: {} } },
    clientInfo: { name: "task-x-e2e", version: "0" },
  });
  const caps = init.agentCapabilities;
  assert(init.protocolVersion === 1, `protocolVersion ${init.protocolVersion}`);
  assert(caps.loadSession && caps.promptCapabilities.image && caps.promptCapabilities.embeddedContext, `capabilities ${JSON.stringify(caps)}`);
  assert(caps.mcpCapabilities.http && init.authMethods.length === 0, `mcp/auth ${JSON.stringify(init)}`);

  const newSession = async () => {
    const mark = updates.length;
    const s = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    await waitUpdate(mark, (u) => u.sessionId === s.sessionId && u.update.sessionUpdate === "available_commands_update");
    return s;
  };

  // A prompt with a streamed answer.
  const s1 = await newSession();
  helloSession = s1.sessionId;
  assert(s1.modes.currentModeId === "agent", `mode ${JSON.stringify(s1.modes)}`);
  assert(["ask", "plan", "agent", "team"].every((m) => s1.modes.availableModes.some((x) => x.id === m)), "the four modes");
  let mark = updates.length;
  let r = await agent.request(methods.agent.session.prompt, say(s1.sessionId, "scenario:hello"));
  assert(r.stopReason === "end_turn", `hello: ${r.stopReason}`);
  const chunks = since(mark, s1.sessionId, "agent_message_chunk");
  assert(chunks.length >= 2 && text(chunks) === "Hello from task-x.", `streamed ${chunks.length} chunks: ${text(chunks)}`);
  assert(since(mark, s1.sessionId, "usage_update").length > 0, "no usage_update");

  // ask_user as one elicitation form (the client offers elicitation.form):
  // a single-select and a multi-select field, tied to the ask_user call.
  const sq = await newSession();
  mark = updates.length;
  r = await agent.request(methods.agent.session.prompt, say(sq.sessionId, "scenario:ask-user"));
  assert(r.stopReason === "end_turn", `ask-user: ${r.stopReason}`);
  const askCall = since(mark, sq.sessionId, "tool_call")[0]?.update.toolCallId;
  const form = elicitations[0];
  assert(
    elicitations.length === 1 && form.sessionId === sq.sessionId && form.mode === "form" && form.toolCallId === askCall &&
      JSON.stringify(form.requestedSchema.properties.color.enum) === '["Red","Blue"]' && form.requestedSchema.properties.parts.type === "array",
    `elicitation: ${JSON.stringify(elicitations)}`,
  );

  // Thinking and update_plan: agent_thought_chunk, a think tool call and a plan.
  const sp = await newSession();
  mark = updates.length;
  r = await agent.request(methods.agent.session.prompt, say(sp.sessionId, "scenario:plan"));
  assert(r.stopReason === "end_turn", `plan: ${r.stopReason}`);
  assert(text(since(mark, sp.sessionId, "agent_thought_chunk")) === "First a plan.", "agent_thought_chunk");
  const plans = since(mark, sp.sessionId, "plan").map((u) => u.update.entries);
  assert(
    plans.length === 1 && JSON.stringify(plans[0].map((e) => [e.content, e.status])) === JSON.stringify([["Read the code", "completed"], ["Fix the bug", "in_progress"], ["Run the tests", "pending"]]),
    `plan: ${JSON.stringify(plans)}`,
  );
  assert(since(mark, sp.sessionId, "tool_call").some((u) => u.update.kind === "think"), "update_plan as a think tool call");

  // A permission request answered each of the four ways, each in its own
  // session. allow_always is the runtime's allowSession, kept for the ACP
  // session: it covers the second write and the next prompt's write too;
  // reject_always is remembered for the session the same way.
  const perm = async (marker, answer, { asked, failed, completed, more }) => {
    const s = await newSession();
    const before = permissions.length;
    onPermission = option(answer);
    const from = updates.length;
    const r = await agent.request(methods.agent.session.prompt, say(s.sessionId, marker));
    assert(r.stopReason === "end_turn", `${marker}: ${r.stopReason}`);
    if (more) {
      const r2 = await agent.request(methods.agent.session.prompt, say(s.sessionId, more));
      assert(r2.stopReason === "end_turn", `${more}: ${r2.stopReason}`);
    }
    const got = permissions.slice(before);
    assert(got.length === asked, `${marker}: ${got.length} permission requests, want ${asked}`);
    for (const p of got) {
      const kinds = p.options.map((o) => o.kind).sort().join(",");
      assert(kinds === "allow_always,allow_once,reject_always,reject_once", `${marker}: options ${kinds}`);
      assert(p.sessionId === s.sessionId && p.toolCall.kind === "edit" && p.toolCall.title.startsWith("Write "), `${marker}: toolCall ${JSON.stringify(p.toolCall)}`);
    }
    const ups = since(from, s.sessionId, "tool_call_update");
    const count = (st) => ups.filter((u) => u.update.status === st).length;
    assert(count("failed") === failed && count("completed") === completed, `${marker}: ${count("completed")} completed, ${count("failed")} failed`);
    return ups;
  };
  const allowed = await perm("scenario:allow-once", "allow_once", { asked: 1, failed: 0, completed: 1 });
  const diff = allowed.flatMap((u) => u.update.content ?? []).find((c) => c.type === "diff");
  assert(diff && diff.path === path.join(cwd, "perm/allow-once.txt") && diff.newText === "allowed once\n" && diff.oldText == null, `created file's diff ${JSON.stringify(diff)}`);
  await perm("scenario:allow-always", "allow_always", { asked: 1, failed: 0, completed: 3, more: "scenario:allow-always-again" });
  await perm("scenario:reject-once", "reject_once", { asked: 2, failed: 2, completed: 0 });
  await perm("scenario:reject-always", "reject_always", { asked: 1, failed: 2, completed: 0 });

  // An edit with its diff.
  const se = await newSession();
  onPermission = option("allow_once");
  mark = updates.length;
  r = await agent.request(methods.agent.session.prompt, say(se.sessionId, "scenario:edit"));
  assert(r.stopReason === "end_turn", `edit: ${r.stopReason}`);
  const calls = since(mark, se.sessionId, "tool_call").map((u) => u.update);
  assert(calls.length === 2 && calls[0].kind === "read" && calls[1].kind === "edit", `edit calls ${JSON.stringify(calls)}`);
  assert(calls[1].locations?.[0]?.path === path.join(cwd, "src/app.txt"), `edit location ${JSON.stringify(calls[1].locations)}`);
  const edit = since(mark, se.sessionId, "tool_call_update").find((u) => u.update.toolCallId === calls[1].toolCallId && u.update.status === "completed");
  const ed = edit?.update.content?.find((c) => c.type === "diff");
  assert(
    ed && ed.path === path.join(cwd, "src/app.txt") && ed.oldText === "hello world\nsecond line\n" && ed.newText === "goodbye world\nsecond line\n",
    `edit diff ${JSON.stringify(edit)}`,
  );
  assert(text(since(mark, se.sessionId, "agent_message_chunk")) === "Edited src/app.txt.", "edit answer");

  // The client's fs methods: read_file sees the unsaved buffer, the edit
  // applies to it, the edit log writes the result to the disk and the
  // editor gets it with fs/write_text_file.
  const sb = await newSession();
  onPermission = option("allow_once");
  const bufferPath = path.join(cwd, "src/buffer.txt");
  const writesBefore = fsWrites.length;
  r = await agent.request(methods.agent.session.prompt, say(sb.sessionId, "scenario:buffer"));
  assert(r.stopReason === "end_turn", `buffer: ${r.stopReason}`);
  assert(fsReads.includes(bufferPath), `fs/read_text_file: ${JSON.stringify(fsReads)}`);
  const wrote = fsWrites.slice(writesBefore);
  assert(wrote.length === 1 && wrote[0].path === bufferPath && wrote[0].content === "edited buffer text\n" && wrote[0].sessionId === sb.sessionId,
    `fs/write_text_file: ${JSON.stringify(wrote)}`);
  assert(fs.readFileSync(bufferPath, "utf8") === "edited buffer text\n", "the edit on disk");

  // Cancel mid-turn: with a permission request open (the client answers
  // it cancelled, as ACP asks), and while the model is answering.
  const sc = await newSession();
  onPermission = async (_params, c) => {
    await agent.notify(methods.agent.session.cancel, { sessionId: sc.sessionId });
    return { outcome: { outcome: "cancelled" } };
  };
  r = await agent.request(methods.agent.session.prompt, say(sc.sessionId, "scenario:cancel-permission"));
  assert(r.stopReason === "cancelled", `cancel with a permission request open: ${r.stopReason}`);
  const sm = await newSession();
  mark = updates.length;
  const pending = agent.request(methods.agent.session.prompt, say(sm.sessionId, "scenario:cancel-streaming"));
  await waitUpdate(mark, (u) => u.sessionId === sm.sessionId && u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed");
  await agent.notify(methods.agent.session.cancel, { sessionId: sm.sessionId });
  r = await pending;
  assert(r.stopReason === "cancelled", `cancel while the model answers: ${r.stopReason}`);

  // A command: kind execute, its output as it comes (in_progress), then
  // completed with it.
  const sx = await newSession();
  onPermission = option("allow_once");
  mark = updates.length;
  r = await agent.request(methods.agent.session.prompt, say(sx.sessionId, "scenario:command"));
  assert(r.stopReason === "end_turn", `command: ${r.stopReason}`);
  const cmd = since(mark, sx.sessionId, "tool_call").map((u) => u.update);
  assert(cmd.length === 1 && cmd[0].kind === "execute" && cmd[0].title === "Run echo first-line; echo second-line", `command call: ${JSON.stringify(cmd)}`);
  const cmdUps = since(mark, sx.sessionId, "tool_call_update").map((u) => u.update).filter((u) => u.toolCallId === cmd[0]?.toolCallId);
  const body = (u) => (u.content ?? []).map((c) => c.content?.text ?? "").join("");
  const live = cmdUps.findIndex((u) => u.status === "in_progress" && body(u).includes("first-line"));
  const done = cmdUps.findIndex((u) => u.status === "completed" && body(u).includes("second-line"));
  assert(live >= 0 && done > live, `command updates: ${JSON.stringify(cmdUps)}`);

  // Team mode: the plan is a plan update, each subagent a tool call, a
  // subagent's write asks permission in the lead's session; the merge
  // writes team.txt.
  const st = await newSession();
  await agent.request(methods.agent.session.setMode, { sessionId: st.sessionId, modeId: "team" });
  onPermission = option("allow_once");
  const permsBefore = permissions.length;
  mark = updates.length;
  r = await agent.request(methods.agent.session.prompt, say(st.sessionId, "scenario:team"));
  assert(r.stopReason === "end_turn", `team: ${r.stopReason}`);
  const teamPlans = since(mark, st.sessionId, "plan").map((u) => u.update.entries);
  assert(teamPlans.length >= 3, `team plan updates: ${JSON.stringify(teamPlans)}`);
  const first = teamPlans[0].map((e) => e.content + ":" + e.status).join("|");
  const last = teamPlans[teamPlans.length - 1].map((e) => e.status).join("|");
  assert(first === "research: scenario:team-research Look around.:pending|implementation: scenario:team-implement Write team.txt.:pending", `the first team plan: ${first}`);
  assert(last === "completed|completed", `the last team plan: ${last}`);
  const subs = since(mark, st.sessionId, "tool_call").filter((u) => u.update.toolCallId.startsWith("subagent/"));
  assert(subs.length === 2 && subs.every((u) => u.update.kind === "think"), `subagent tool calls: ${JSON.stringify(subs)}`);
  const subDone = since(mark, st.sessionId, "tool_call_update").filter((u) => u.update.toolCallId.startsWith("subagent/") && u.update.status === "completed");
  assert(subDone.length === 2, `subagents completed: ${subDone.length}`);
  const subPerm = permissions.slice(permsBefore).find((p) => p.toolCall.title.includes("team.txt"));
  assert(subPerm && subPerm.sessionId === st.sessionId && subPerm.toolCall.toolCallId.includes("/"), `a subagent's permission request: ${JSON.stringify(permissions.slice(permsBefore))}`);
  assert(text(since(mark, st.sessionId, "agent_message_chunk")).endsWith("Team done."), "the lead's answer");

  // $/cancel_request: the SDK cancels the prompt request itself; it
  // answers -32800.
  const sr = await newSession();
  mark = updates.length;
  const abort = new AbortController();
  const aborted = agent.request(methods.agent.session.prompt, say(sr.sessionId, "scenario:cancel-request"), { cancellationSignal: abort.signal });
  await waitUpdate(mark, (u) => u.sessionId === sr.sessionId && u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed");
  abort.abort();
  let cancelErr = null;
  try {
    await aborted;
  } catch (e) {
    cancelErr = e;
  }
  assert(cancelErr && cancelErr.code === -32800, `$/cancel_request: ${cancelErr}`);

  // Set mode: ask, reported by current_mode_update; the next prompt runs in it.
  mark = updates.length;
  await agent.request(methods.agent.session.setMode, { sessionId: s1.sessionId, modeId: "ask" });
  await waitUpdate(mark, (u) => u.sessionId === s1.sessionId && u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "ask");
  r = await agent.request(methods.agent.session.prompt, say(s1.sessionId, "scenario:ask-mode"));
  assert(r.stopReason === "end_turn", `ask mode: ${r.stopReason}`);
  let bad = null;
  try {
    await agent.request(methods.agent.session.setMode, { sessionId: s1.sessionId, modeId: "yolo" });
  } catch (e) {
    bad = e;
  }
  assert(bad && bad.code === -32602, `an unknown mode: ${bad}`);
});
await stop(first);

// Second runtime: list and load the saved session, then continue it.
const second = startAgent();
await app.connectWith(second.stream, async (agent) => {
  await agent.request(methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const list = await agent.request(methods.agent.session.list, { cwd });
  assert(list.sessions.some((s) => s.sessionId === helloSession && s.cwd === cwd), `session/list ${JSON.stringify(list)}`);
  const mark = updates.length;
  const loaded = await agent.request(methods.agent.session.load, { sessionId: helloSession, cwd, mcpServers: [] });
  assert(loaded.modes.currentModeId === "ask", `loaded mode ${JSON.stringify(loaded.modes)}`);
  const users = since(mark, helloSession, "user_message_chunk");
  assert(text(users).includes("scenario:hello") && text(users).includes("scenario:ask-mode"), `replayed prompts: ${text(users)}`);
  const answers = text(since(mark, helloSession, "agent_message_chunk"));
  assert(answers.includes("Hello from task-x.") && answers.includes("Asked."), `replayed answers: ${answers}`);
  const after = updates.length;
  await agent.request(methods.agent.session.setMode, { sessionId: helloSession, modeId: "agent" });
  const r = await agent.request(methods.agent.session.prompt, say(helloSession, "scenario:continue"));
  assert(r.stopReason === "end_turn", `continued: ${r.stopReason}`);
  assert(text(since(after, helloSession, "agent_message_chunk")) === "Continued.", "the continued answer");
});
await stop(second);

for (const [dir, m] of Object.entries(pending)) if (m.size) fail(`${dir}: ${m.size} requests never answered`);
if (failures.length) {
  process.stderr.write(`${failures.length} checks failed\n`);
  process.exit(1);
}
process.stdout.write(JSON.stringify(report) + "\n");
