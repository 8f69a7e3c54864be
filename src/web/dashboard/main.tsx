import { render } from "preact";
import { App } from "./app";
import { applyTheme, followSystemTheme, initialTheme } from "./theme";

applyTheme(initialTheme());
followSystemTheme();
render(<App />, document.getElementById("app")!);
