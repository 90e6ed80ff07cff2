// The dashboard's entry point: it draws the app into #app.
import { render } from "preact";
import { App } from "./app";
import "./styles.css";

render(<App />, document.getElementById("app")!);
