import { App } from "./app";
import "./styles.css";
import type { Shape } from "./types";
new App();
