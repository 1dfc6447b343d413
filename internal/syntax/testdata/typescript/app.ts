import { readFile, writeFile as wf } from "./fs";
import Default, * as ns from "../lib/index.js";
import "./side-effect";
export { helper } from "./helpers";
export * from "./all";
const cfg = require("./config");

export interface Options {
  name: string;
  run(x: number): void;
}

export type Id = string | number;

export enum Color { Red, Green }

export class Service extends Base implements Options {
  name = "svc";
  private secret: string;
  run(x: number): void {
    const local = helper(x);
  }
  static create(): Service { return new Service(); }
}

export function start(opts: Options): Service {
  return Service.create();
}

export const handler = async (req: Request) => {
  return import("./lazy");
};

const MAX = 3;
let counter = 0;

namespace Internal {
  export function util() {}
}

function hidden() {}
