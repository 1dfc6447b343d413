const path = require("path");
const { helper } = require("./util.js");
import { render } from "./render";
export { a, b as c } from "./ab";

export default function App() {
  return <div>{helper(path.sep)}</div>;
}

export class Store {
  #items = [];
  add(item) { this.#items.push(item); }
  get size() { return this.#items.length; }
}

export const make = function () { return new Store(); };
const VERSION = "1.0";
var legacy = 1;

async function load() {
  const mod = await import("./lazy.js");
  return mod;
}
