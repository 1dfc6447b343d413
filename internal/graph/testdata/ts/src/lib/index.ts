export * from "./math";
import { App } from "../app";
export function util(a: App) {}
