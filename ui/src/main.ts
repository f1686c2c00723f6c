import "./app.css";
import { mount } from "svelte";
import App from "./App.svelte";
import { applyTheme, storedTheme } from "$lib/theme";
import { registerBuiltinTraceRenderers } from "$lib/traces/builtin";

// Before mounting, so the first paint already has the chosen theme.
applyTheme(storedTheme());
registerBuiltinTraceRenderers();

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");
mount(App, { target });
