import _ from "lodash";
import "./nope";
export function add(a: number, b: number) { return a + b; }
