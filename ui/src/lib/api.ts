// The one module that talks to the Tauri shell. Every command's argument
// names are snake_case, exactly as the Rust commands declare them, and every
// rejection is turned into an IpcError so views handle one error shape.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { AppInfo } from "$lib/bindings/AppInfo";
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { Calibration } from "$lib/bindings/Calibration";
import type { Collection } from "$lib/bindings/Collection";
import type { DocumentPage } from "$lib/bindings/DocumentPage";
import type { DocumentTree } from "$lib/bindings/DocumentTree";
import type { EngineEvent } from "$lib/bindings/EngineEvent";
import type { EvalDiff } from "$lib/bindings/EvalDiff";
import type { EvalEvent } from "$lib/bindings/EvalEvent";
import type { EvalForm } from "$lib/bindings/EvalForm";
import type { EvalPick } from "$lib/bindings/EvalPick";
import type { EvalReport } from "$lib/bindings/EvalReport";
import type { EvalRun } from "$lib/bindings/EvalRun";
import type { Found } from "$lib/bindings/Found";
import type { GraphStatus } from "$lib/bindings/GraphStatus";
import type { IpcError } from "$lib/bindings/IpcError";
import type { LibraryOverview } from "$lib/bindings/LibraryOverview";
import type { MethodInfo } from "$lib/bindings/MethodInfo";
import type { NoteLinks } from "$lib/bindings/NoteLinks";
import type { Pace } from "$lib/bindings/Pace";
import type { PassageBoxes } from "$lib/bindings/PassageBoxes";
import type { PassSummary } from "$lib/bindings/PassSummary";
import type { Progress } from "$lib/bindings/Progress";
import type { RightBy } from "$lib/bindings/RightBy";
import type { Rubric } from "$lib/bindings/Rubric";
import type { RunEvent } from "$lib/bindings/RunEvent";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { Scope } from "$lib/bindings/Scope";
import type { SearchHit } from "$lib/bindings/SearchHit";
import type { SearchMode } from "$lib/bindings/SearchMode";
import type { ServerView } from "$lib/bindings/ServerView";
import type { SettingsInput } from "$lib/bindings/SettingsInput";
import type { SettingsView } from "$lib/bindings/SettingsView";
import type { Support } from "$lib/bindings/Support";
import type { TagCount } from "$lib/bindings/TagCount";
import type { ThreadDetail } from "$lib/bindings/ThreadDetail";
import type { ThreadSummary } from "$lib/bindings/ThreadSummary";

/** Normalises anything a command can reject with into an IpcError. */
export function toIpcError(error: unknown): IpcError {
  if (typeof error === "object" && error !== null && "message" in error) {
    const e = error as { code?: unknown; message: unknown; details?: unknown };
    return {
      code: typeof e.code === "string" ? e.code : "internal",
      message: String(e.message),
      details: typeof e.details === "string" ? e.details : null,
    };
  }
  // Outside the shell (a plain browser on the dev server) invoke throws a
  // TypeError; a string rejection comes from Tauri itself (unknown command).
  return { code: "internal", message: String(error), details: null };
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toIpcError(error);
  }
}

export const api = {
  appInfo: () => call<AppInfo>("app_info"),
  /** How fast the model answers here: timed on the first call (seconds), the same answer after. */
  modelPace: () => call<Pace>("model_pace"),
  libraryOverview: () => call<LibraryOverview>("library_overview"),
  folderDocuments: (folder: string, offset: number, limit: number) =>
    call<DocumentPage>("folder_documents", { folder, offset, limit }),
  pickFolder: () => call<string | null>("pick_folder"),
  addFolders: (paths: string[]) => call<number>("add_folders", { paths }),
  removeFolder: (path: string) => call<void>("remove_folder", { path }),
  pauseJobs: () => call<void>("pause_jobs"),
  resumeJobs: () => call<void>("resume_jobs"),
  cancelJob: (jobId: number) => call<void>("cancel_job", { job_id: jobId }),
  /** Reads files of the library again, each alone (a set-aside file's "Retry"). */
  retryFiles: (paths: string[]) => call<PassSummary>("retry_files", { paths }),
  documentTree: (path: string) => call<DocumentTree>("document_tree", { path }),
  /** A note's tags, aliases, links (resolved now) and backlinks; rejects when the path is not indexed. */
  noteLinks: (path: string) => call<NoteLinks>("note_links", { path }),
  /** Every tag of the library's indexed notes, in order, with how many notes carry each. */
  tags: () => call<TagCount[]>("tags"),
  /** The raw bytes of an indexed PDF; rejects when the file is gone, too big, or not a PDF in the library. */
  documentFile: (path: string) => call<ArrayBuffer>("document_file", { path }),
  /**
   * Where the stored passage with this span is drawn on a PDF page, in PDF
   * user space; or that its position was not recorded, or that no stored
   * passage has that span any more (the document changed).
   */
  passageBoxes: (path: string, page: number, spanStart: number, spanEnd: number) =>
    call<PassageBoxes>("passage_boxes", { path, page, span_start: spanStart, span_end: spanEnd }),
  graphStatus: () => call<GraphStatus>("graph_status"),
  /** Queues a graph job (or finds the waiting one with these options); resolves to its id. */
  buildGraph: (rubric: Rubric, n: number) => call<number>("build_graph", { rubric, n }),
  /** Every saved collection, by name, with its folders, its tags and how many documents it holds now. */
  collections: () => call<Collection[]>("collections"),
  /** Creates collection `name`, or replaces what it holds; rejects with a readable reason (a bad name, a folder not in the library). */
  saveCollection: (name: string, folders: string[], tags: string[]) => call<Collection>("save_collection", { name, folders, tags }),
  deleteCollection: (name: string) => call<void>("delete_collection", { name }),
  /** How many documents `scope` holds (null: the whole library), or rejects saying why it cannot be used. */
  scopeSize: (scope: Scope) => call<number | null>("scope_size", { scope }),
  /** Plain search, as `folio search`: the `k` chunks that best match `query` within `scope`, best first. */
  search: (query: string, k: number, mode: SearchMode, scope: Scope) =>
    call<SearchHit[]>("search", { query, k, mode, scope }),
  methods: () => call<MethodInfo[]>("methods"),
  ask: (request: AskRequest, askId: string, onEvents: (events: RunEvent[]) => void) => {
    const channel = new Channel<RunEvent[]>();
    channel.onmessage = onEvents;
    return call<RunRecord>("ask", { request, ask_id: askId, on_event: channel });
  },
  cancelAsk: (askId: string) => call<void>("cancel_ask", { ask_id: askId }),
  /** Threads, most recently active first; `query` matches any turn's question or answer. */
  threads: (query: string | null, limit: number) => call<ThreadSummary[]>("threads", { query, limit }),
  threadDetail: (id: number) => call<ThreadDetail>("thread_detail", { id }),
  deleteThread: (id: number) => call<void>("delete_thread", { id }),
  /** Asks where to save, then writes the whole thread; null when the person cancels. */
  exportThread: (id: number) => call<string | null>("export_thread", { id }),
  exportRun: (id: number) => call<string | null>("export_run", { id }),
  settings: () => call<SettingsView>("settings"),
  saveSettings: (input: SettingsInput) => call<SettingsView>("save_settings", { input }),
  /**
   * The model ids the OpenAI-compatible server at `baseUrl` serves. Without a
   * typed key the stored one is sent, but only to the server it was entered for.
   */
  servedModels: (baseUrl: string, apiKey?: string) =>
    call<string[]>("served_models", { base_url: baseUrl, api_key: apiKey ?? null }),
  serverSupport: (baseUrl: string, model: string, apiKey?: string) =>
    call<Support>("server_support", { base_url: baseUrl, api_key: apiKey ?? null, model }),
  pickModelFile: () => call<string | null>("pick_model_file"),
  /** GGUF files other apps keep and servers answering on 127.0.0.1; takes up to a few seconds. */
  foundModels: () => call<Found>("found_models"),
  /** The configured language model's stored calibration for CRP-RAG; null when it was never calibrated. */
  modelCalibration: () => call<Calibration | null>("model_calibration"),
  /**
   * Measures the configured model on the probe set, one progress message per
   * answer, and saves the result as its calibration. Rejects when the model
   * gives no log-probabilities, and when cancelled.
   */
  calibrateModel: (onProgress: (progress: Progress) => void) => {
    const channel = new Channel<Progress>();
    channel.onmessage = onProgress;
    return call<Calibration>("calibrate_model", { on_progress: channel });
  },
  /** Stops the calibration in flight; it then rejects. */
  cancelCalibration: () => call<void>("cancel_calibration"),
  /** Whether the library is served to other apps on this machine, where, and how clients reach it. */
  serverView: () => call<ServerView>("server_view"),
  /**
   * Serves the library at `address` (a loopback address; port 0 takes a free
   * port) or stops serving it, and remembers the choice. A port in use does
   * not reject: the view comes back not running, with the reason.
   */
  switchServer: (on: boolean, address: string) => call<ServerView>("switch_server", { on, address }),
  pickEvalPath: (pick: EvalPick) => call<string | null>("pick_eval_path", { pick }),
  /**
   * Runs a whole evaluation, streaming one event per message. Cancelled while
   * answering it still resolves, with the report marked interrupted.
   */
  startEval: (form: EvalForm, onEvent: (event: EvalEvent) => void) => {
    const channel = new Channel<EvalEvent>();
    channel.onmessage = onEvent;
    return call<EvalReport>("start_eval", { form, on_event: channel });
  },
  cancelEval: () => call<void>("cancel_eval"),
  evalReport: (out: string) => call<EvalReport>("eval_report", { out }),
  /** The stored runs behind one question's answers, one per spec whose run the evaluation's index holds. */
  evalRuns: (out: string, questionId: string) => call<EvalRun[]>("eval_runs", { out, question_id: questionId }),
  /** Where two of the evaluation's specs part ways: the questions only one got right, with both answers and traces. */
  evalDiff: (out: string, a: string, b: string, rightBy: RightBy) =>
    call<EvalDiff>("eval_diff", { out, a, b, right_by: rightBy }),
  exportEvalReport: (out: string) => call<string | null>("export_eval_report", { out }),
};

/** Subscribes to the engine's batched events; resolves to the unsubscriber. */
export function onEngineEvents(handler: (events: EngineEvent[]) => void): Promise<UnlistenFn> {
  return listen<EngineEvent[]>("engine", (event) => handler(event.payload));
}
