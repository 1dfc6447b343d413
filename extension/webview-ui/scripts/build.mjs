// Builds the chat webview into ../media/webview: chat.js (one ES module,
// minified), chat.css, and codicon.css/codicon.ttf from @vscode/codicons.
// Usage: node scripts/build.mjs [--dev] (dev keeps names and adds sourcemaps).
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const out = join(root, "..", "media", "webview");
const dev = process.argv.includes("--dev");
mkdirSync(out, { recursive: true });

const t0 = Date.now();
const result = await build({
  entryPoints: { chat: join(root, "src", "main.ts"), "chat-style": join(root, "src", "styles.css"), graph: join(root, "src", "graph.ts"), "graph-style": join(root, "src", "graph.css") },
  outdir: out,
  entryNames: "[name]",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome120"],
  minify: !dev,
  sourcemap: dev ? "linked" : false,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
// The graph's layout worker: a classic script (the page starts it from a blob).
const worker = await build({
  entryPoints: { "graph-layout": join(root, "src", "graphLayout.ts") },
  outdir: out,
  entryNames: "[name]",
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["chrome120"],
  minify: !dev,
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});
Object.assign(result.metafile.outputs, worker.metafile.outputs);
// esbuild names the CSS entry chat-style.css; the host links chat.css.
const { renameSync } = await import("node:fs");
renameSync(join(out, "chat-style.css"), join(out, "chat.css"));
renameSync(join(out, "graph-style.css"), join(out, "graph.css"));
const codicons = join(root, "node_modules", "@vscode", "codicons", "dist");
copyFileSync(join(codicons, "codicon.css"), join(out, "codicon.css"));
copyFileSync(join(codicons, "codicon.ttf"), join(out, "codicon.ttf"));
const size = Object.entries(result.metafile.outputs)
  .map(([f, o]) => `${f.split("/").pop()} ${(o.bytes / 1024).toFixed(0)} KB`)
  .join(", ");
console.log(`webview-ui: built ${size} in ${Date.now() - t0} ms`);
