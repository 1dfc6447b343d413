// The project graph page (issue 36 item 5): graph/project drawn with
// cytoscape.js and the fCoSE layout (docs/webview.md says why). File and module
// levels, focus on the active file with a depth, import and reference edges
// told apart (solid and dashed), nodes in an import cycle and hubs marked, a
// click opens the file. The host runs graph/project; this page asks for it
// ("query") and draws what comes back ("graph"). Node ids are paths from the
// workspace: shown as text (cytoscape draws labels on a canvas), never as HTML.
import cytoscape from "cytoscape";
import fcose from "cytoscape-fcose";
import { layout, type LayoutRequest, type LayoutResponse } from "./graphLayout";
import type { GraphProjectResult } from "./protocol";

/** Edges drawn at most: the heaviest, imports first (the stats say how many there were). */
export const MAX_EDGES = 3000;
const NODE_SLICE = 150;
const EDGE_SLICE = 400;

/** The next frame (or a short timer when the panel is hidden and gets no frames). */
function nextFrame(): Promise<void> {
  return new Promise((r) => {
    const t = setTimeout(r, 50);
    requestAnimationFrame(() => {
      clearTimeout(t);
      r();
    });
  });
}

cytoscape.use(fcose);
// cytoscape adds a <style> to the head unless an element with this id exists;
// the strict CSP refuses inline styles, and graph.css holds that rule already.
document.head.append(Object.assign(document.createElement("meta"), { id: "__________cytoscape_stylesheet" }));

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };
const vscode = acquireVsCodeApi();

export type GraphQuery = { type: "query"; level: "file" | "module"; focus: string | null; depth: number; importsOnly: boolean };
export type GraphToHost =
  | GraphQuery
  | { type: "ready" }
  | { type: "openNode"; id: string; level: "file" | "module" }
  | { type: "rendered"; nodes: number; edges: number; layoutMs: number; layoutWallMs: number; inWorker: boolean; renderMs: number; totalMs: number };
export type HostToGraph =
  | { type: "graph"; result: GraphProjectResult; query: GraphQuery }
  | { type: "activeFile"; path: string | null }
  | { type: "error"; message: string };

const post = (m: GraphToHost) => vscode.postMessage(m);

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...kids: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...kids);
  return e;
}

const root = document.getElementById("root")!;
const level = el("select", { "aria-label": "Level", "data-testid": "graph-level" }, el("option", { value: "file" }, "Files"), el("option", { value: "module" }, "Modules"));
const focusBox = el("input", { type: "checkbox", id: "focus", "data-testid": "graph-focus" });
const depth = el("select", { "aria-label": "Depth", "data-testid": "graph-depth" }, ...[1, 2, 3, 4].map((d) => el("option", { value: String(d) }, `depth ${d}`)));
const importsOnly = el("input", { type: "checkbox", id: "imports", "data-testid": "graph-imports" });
const stats = el("span", { class: "stats", "data-testid": "graph-stats", "aria-live": "polite" });
const legend = el(
  "span",
  { class: "legend" },
  el("span", { class: "l-import" }, "— import"),
  " ",
  el("span", { class: "l-ref" }, "- - reference"),
  " ",
  el("span", { class: "l-cycle" }, "● in a cycle"),
  " ",
  el("span", { class: "l-hub" }, "◆ hub"),
);
const canvas = el("div", { class: "graph", "data-testid": "graph-canvas" });
const side = el("div", { class: "side", "data-testid": "graph-side" });
root.append(
  el(
    "div",
    { class: "bar" },
    level,
    el("label", { for: "focus" }, focusBox, " Focus on the active file"),
    depth,
    el("label", { for: "imports" }, importsOnly, " Imports only"),
    legend,
    stats,
  ),
  el("div", { class: "main" }, canvas, side),
);

let activeFile: string | null = null;
let cy: cytoscape.Core | null = null;
let lastQuery: GraphQuery | null = null;

function query(): void {
  const q: GraphQuery = {
    type: "query",
    level: level.value === "module" ? "module" : "file",
    focus: focusBox.checked ? activeFile : null,
    depth: Number(depth.value) || 1,
    importsOnly: importsOnly.checked,
  };
  stats.textContent = "Loading…";
  post(q);
}

for (const c of [level, focusBox, depth, importsOnly]) c.addEventListener("change", query);

let drawId = 0;

async function draw(result: GraphProjectResult, q: GraphQuery): Promise<void> {
  const t0 = performance.now();
  const id = ++drawId;
  lastQuery = q;
  const nodes = Array.isArray(result?.nodes) ? result.nodes : [];
  const all = (Array.isArray(result?.edges) ? result.edges : []).filter((e) => nodes[e.from] && nodes[e.to] && e.from !== e.to);
  // The heaviest edges, imports first: thousands more would only paint the canvas grey.
  const edges = all.length > MAX_EDGES ? [...all].sort((a, b) => (a.kind === b.kind ? (Number(b.weight) || 0) - (Number(a.weight) || 0) : a.kind === "import" ? -1 : 1)).slice(0, MAX_EDGES) : all;
  const hubs = new Set((result?.stats?.hubs ?? []).map((h) => h.path));
  const maxDegree = Math.max(1, ...nodes.map((n) => Number(n.degree) || 0));
  stats.textContent = `Laying out ${nodes.length} ${q.level === "module" ? "modules" : "files"}…`;
  const tl = performance.now();
  const laid = await runLayout({ id, nodes: nodes.map((n) => String(n.id)), edges: edges.map((e) => [e.from, e.to]) });
  if (id !== drawId) return; // a newer graph came meanwhile
  const layoutMs = laid.ms;
  const layoutWallMs = performance.now() - tl;
  const nodeEls: cytoscape.ElementDefinition[] = [];
  const edgeEls: cytoscape.ElementDefinition[] = [];
  nodes.forEach((n, i) => {
    const path = String(n.id);
    const label = path.length > 40 ? `…${path.slice(-39)}` : path;
    const classes = [n.inCycle ? "cycle" : "", hubs.has(path) ? "hub" : "", q.focus && path === q.focus ? "focus" : ""].filter(Boolean).join(" ");
    const [x, y] = laid.positions[i] ?? [0, 0];
    nodeEls.push({ group: "nodes", data: { id: `n${i}`, path, label: label.split("/").pop() || label, degree: Number(n.degree) || 0 }, position: { x, y }, classes });
  });
  edges.forEach((e, i) => {
    edgeEls.push({ group: "edges", data: { id: `e${i}`, source: `n${e.from}`, target: `n${e.to}`, weight: Number(e.weight) || 1 }, classes: e.kind === "import" ? "import" : "reference" });
  });
  const tr = performance.now();
  cy?.destroy();
  // Nodes first, edges in slices of EDGE_SLICE a frame: no single long task for a big graph.
  const first = nodeEls.slice(0, NODE_SLICE);
  const c = cytoscape({
    container: canvas,
    elements: first,
    wheelSensitivity: 0.3,
    minZoom: 0.05,
    maxZoom: 4,
    textureOnViewport: true,
    hideEdgesOnViewport: edgeEls.length > 1500,
    pixelRatio: 1,
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 9, color: fg, "text-valign": "bottom", "text-margin-y": 2, width: `mapData(degree, 0, ${maxDegree}, 6, 24)`, height: `mapData(degree, 0, ${maxDegree}, 6, 24)`, "background-color": nodeBg, "min-zoomed-font-size": 7 } },
      { selector: "node.cycle", style: { "border-width": 2, "border-color": red } },
      { selector: "node.hub", style: { shape: "diamond", "background-color": amber, width: 30, height: 30, "font-weight": "bold", "z-index": 10 } },
      { selector: "node.focus", style: { "border-width": 3, "border-color": blue } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": blue } },
      { selector: "edge", style: { width: "mapData(weight, 1, 20, 0.6, 3)", "curve-style": "haystack", opacity: 0.55 } },
      { selector: "edge.import", style: { "line-color": fg, "line-style": "solid" } },
      { selector: "edge.reference", style: { "line-color": muted, "line-style": "dashed" } },
    ],
    layout: { name: "preset", fit: false },
  });
  cy = c;
  c.fit(undefined, 20);
  const fit = () => c.fit(undefined, 20);
  for (let i = NODE_SLICE; i < nodeEls.length; i += NODE_SLICE) {
    await nextFrame();
    if (id !== drawId) return;
    c.add(nodeEls.slice(i, i + NODE_SLICE));
  }
  fit();
  for (let i = 0; i < edgeEls.length; i += EDGE_SLICE) {
    await nextFrame();
    if (id !== drawId) return;
    c.add(edgeEls.slice(i, i + EDGE_SLICE));
  }
  c.resize();
  fit();
  c.on("tap", "node", (ev) => {
    const path = String(ev.target.data("path"));
    showSide(path);
    post({ type: "openNode", id: path, level: q.level });
  });
  const s = result?.stats;
  const shown = edges.length < all.length ? `${edges.length} of ${all.length} edges (the heaviest)` : `${all.length} edges`;
  stats.textContent = `${nodes.length} of ${result?.total ?? nodes.length} ${q.level === "module" ? "modules" : "files"}${q.focus ? ` around ${q.focus}` : ""} · ${shown} · ${s?.cycles ?? 0} import cycles · ${hubs.size} hubs`;
  canvas.dataset.nodes = String(nodes.length);
  canvas.dataset.edges = String(cy.edges().length);
  // An empty list says so (QA: a heading over nothing read as a list that failed to load).
  const list = (testid: string, items: HTMLElement[], none: string) =>
    el("ul", { "data-testid": testid }, ...(items.length ? items : [el("li", { class: "none" }, none)]));
  side.replaceChildren(
    el("div", { class: "side-title" }, "Hubs"),
    list("graph-hubs", (s?.hubs ?? []).slice(0, 10).map((h) => el("li", {}, `${h.path} (${h.dependents})`)), "None: no file is imported by many others."),
    el("div", { class: "side-title" }, "Import cycles"),
    list("graph-cycles", (s?.importCycles ?? []).slice(0, 5).map((c) => el("li", {}, c.slice(0, 6).join(" → ") + (c.length > 6 ? " → …" : ""))), s?.cycles ? `${s.cycles} (none in this view)` : "None: no files import each other in a loop."),
  );
  // Reported after the first frame with the graph on screen.
  requestAnimationFrame(() =>
    post({ type: "rendered", nodes: nodes.length, edges: cy?.edges().length ?? 0, layoutMs, layoutWallMs: Math.round(layoutWallMs), inWorker: laid.inWorker, renderMs: Math.round(performance.now() - tr), totalMs: Math.round(performance.now() - t0) }),
  );
}

// ---- the layout worker

let worker: Worker | null | undefined;
const layoutWaiters = new Map<number, (r: LayoutResponse) => void>();

/** The worker, from the script the host names (fetched and started from a blob: the webview's resources are another origin); null when it cannot start. */
async function layoutWorker(): Promise<Worker | null> {
  if (worker !== undefined) return worker;
  const url = root.dataset.layout;
  try {
    if (!url) throw new Error("no layout script");
    const code = await (await fetch(url)).text();
    const w = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
    w.onmessage = (e: MessageEvent<LayoutResponse>) => {
      layoutWaiters.get(e.data.id)?.(e.data);
      layoutWaiters.delete(e.data.id);
    };
    worker = w;
  } catch {
    worker = null;
  }
  return worker;
}

async function runLayout(req: LayoutRequest): Promise<LayoutResponse & { inWorker: boolean }> {
  const w = await layoutWorker();
  if (!w) return { ...layout(req), inWorker: false };
  return new Promise((resolve) => {
    layoutWaiters.set(req.id, (r) => resolve({ ...r, inWorker: true }));
    w.postMessage(req);
  });
}

function showSide(path: string): void {
  side.querySelector(".picked")?.remove();
  side.prepend(el("div", { class: "picked side-title", "data-testid": "graph-picked" }, path));
}

// Theme colours from VS Code's CSS variables (a canvas cannot read var()).
const css = getComputedStyle(document.documentElement);
const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
const fg = v("--vscode-foreground", "#888");
const muted = v("--vscode-descriptionForeground", "#999");
const nodeBg = v("--vscode-charts-blue", "#3794ff");
const red = v("--vscode-charts-red", "#f14c4c");
const amber = v("--vscode-charts-yellow", "#cca700");
const blue = v("--vscode-focusBorder", "#0090f1");

window.addEventListener("message", (e: MessageEvent) => {
  const m = e.data as HostToGraph;
  if (!m || typeof m !== "object") return;
  switch (m.type) {
    case "graph":
      void draw(m.result, m.query);
      break;
    case "activeFile":
      activeFile = typeof m.path === "string" ? m.path : null;
      focusBox.disabled = activeFile === null;
      if (focusBox.checked && lastQuery && lastQuery.focus !== activeFile) query();
      break;
    case "error":
      stats.textContent = String(m.message);
      break;
  }
});

/** For the page tests: where a node is drawn (page coordinates), to click it as a user would. */
(window as unknown as { taskxGraph: unknown }).taskxGraph = {
  nodePosition(path: string): { x: number; y: number } | null {
    const n = cy?.nodes().filter((x) => x.data("path") === path);
    if (!n || n.empty()) return null;
    const p = n[0]!.renderedPosition();
    const r = canvas.getBoundingClientRect();
    return { x: r.left + p.x, y: r.top + p.y };
  },
  classes(path: string): string[] {
    const n = cy?.nodes().filter((x) => x.data("path") === path).first();
    return n && !n.empty() ? n.classes() : [];
  },
  edgeClasses(): string[] {
    return cy ? [...new Set(cy.edges().map((e) => e.classes().join(" ")))].sort() : [];
  },
  /** The drawn graph's box against the canvas (rendered pixels), for the tests. */
  box(): { x1: number; y1: number; x2: number; y2: number; width: number; height: number; cyWidth: number; cyHeight: number } | null {
    if (!cy) return null;
    const b = cy.nodes().renderedBoundingBox({ includeLabels: false });
    return { x1: b.x1, y1: b.y1, x2: b.x2, y2: b.y2, width: canvas.clientWidth, height: canvas.clientHeight, cyWidth: cy.width(), cyHeight: cy.height() };
  },
};

// The panel can be resized or split narrow at any time: cytoscape is told the
// canvas's new size and the graph fitted again, once a frame at most.
let refit = 0;
new ResizeObserver(() => {
  if (refit) return;
  refit = requestAnimationFrame(() => {
    refit = 0;
    if (!cy || canvas.clientWidth === 0 || canvas.clientHeight === 0) return;
    cy.resize();
    cy.fit(undefined, 20);
  });
}).observe(canvas);

post({ type: "ready" });
query();
