import { util } from "./lib";
import { Button } from "./components/Button.js";
export class App { render() { return <Button onClick={util} />; } }
