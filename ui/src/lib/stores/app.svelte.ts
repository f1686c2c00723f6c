// App-wide state: the current view, what the shell told us at start-up,
// and the source viewer that any view can open.
import { api, toIpcError } from "$lib/api";
import type { AnsweringModel } from "$lib/bindings/AnsweringModel";
import type { AppInfo } from "$lib/bindings/AppInfo";
import type { IpcError } from "$lib/bindings/IpcError";
import type { MethodInfo } from "$lib/bindings/MethodInfo";
import type { Pace } from "$lib/bindings/Pace";
import type { SourceTarget } from "$lib/source";

export const VIEWS = [
  { id: "library", label: "Library" },
  { id: "search", label: "Search" },
  { id: "ask", label: "Ask" },
  { id: "compare", label: "Compare" },
  { id: "history", label: "History" },
  { id: "evaluate", label: "Evaluate" },
  { id: "settings", label: "Settings" },
] as const;

export type ViewId = (typeof VIEWS)[number]["id"];

export const app = $state({
  view: "library" as ViewId,
  info: null as AppInfo | null,
  methods: [] as MethodInfo[],
  loadError: null as IpcError | null,
  ready: false,
  source: null as SourceTarget | null,
  /**
   * How fast the answering model is here, once the shell has timed it, and
   * the model it was timed on: the first-start card shows it again on every
   * visit to Library or Ask without a "measuring…" flash in between.
   */
  modelPace: null as { model: AnsweringModel; pace: Pace } | null,
});

export async function loadApp(): Promise<void> {
  try {
    const [info, methods] = await Promise.all([api.appInfo(), api.methods()]);
    app.info = info;
    app.methods = methods;
    app.loadError = null;
    app.ready = true;
  } catch (error) {
    app.loadError = toIpcError(error);
  }
}

/** Re-reads app_info after settings change which model is in use. */
export async function reloadAppInfo(): Promise<void> {
  try {
    app.info = await api.appInfo();
  } catch (error) {
    app.loadError = toIpcError(error);
  }
}

export function showView(view: ViewId): void {
  app.view = view;
}

export function openSource(target: SourceTarget): void {
  app.source = { ...target };
}

export function closeSource(): void {
  app.source = null;
}

export function methodInfo(id: string): MethodInfo | undefined {
  return app.methods.find((m) => m.id === id);
}
