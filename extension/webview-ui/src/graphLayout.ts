// The project graph's layout, in a Web Worker (graph.ts starts it): fCoSE on a
// headless cytoscape, so a graph of 600 files and thousands of edges is laid
// out without blocking the page (or, in VS Code, the workbench). In: nodes and
// edges; out: a position per node id.
import cytoscape from "cytoscape";
import fcose from "cytoscape-fcose";

cytoscape.use(fcose);

export interface LayoutRequest {
  id: number;
  nodes: string[];
  edges: [number, number][];
}
export interface LayoutResponse {
  id: number;
  positions: [number, number][];
  ms: number;
}

export function layout(req: LayoutRequest): LayoutResponse {
  const t0 = performance.now();
  const cy = cytoscape({
    headless: true,
    styleEnabled: false,
    elements: [
      ...req.nodes.map((id, i) => ({ group: "nodes" as const, data: { id: `n${i}`, path: id } })),
      ...req.edges.map(([s, t], i) => ({ group: "edges" as const, data: { id: `e${i}`, source: `n${s}`, target: `n${t}` } })),
    ],
  });
  const big = req.nodes.length > 300;
  cy.layout({
    name: "fcose",
    quality: big ? "draft" : "default",
    animate: false,
    randomize: true,
    nodeRepulsion: () => 6000,
    idealEdgeLength: () => 60,
    numIter: big ? 1200 : 2500,
    packComponents: true,
    // Headless: every node is 30 wide.
    nodeDimensionsIncludeLabels: false,
  } as cytoscape.LayoutOptions).run();
  const positions = req.nodes.map((_, i) => {
    const p = cy.getElementById(`n${i}`).position();
    return [Math.round(p.x), Math.round(p.y)] as [number, number];
  });
  cy.destroy();
  return { id: req.id, positions, ms: Math.round(performance.now() - t0) };
}

// In a worker: answer each request.
const g = globalThis as unknown as { WorkerGlobalScope?: unknown; onmessage: unknown; postMessage(m: unknown): void };
if (typeof g.WorkerGlobalScope !== "undefined") {
  g.onmessage = (e: MessageEvent<LayoutRequest>) => g.postMessage(layout(e.data));
}
