// Drives the whole app in jsdom against a fake shell: every view renders
// from command results, keyboard navigation works, an answer streams and
// opens its source. The shell is faked only here, at the invoke boundary.
import { mount, unmount } from "svelte";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { EngineEvent } from "$lib/bindings/EngineEvent";
import type { RunEvent } from "$lib/bindings/RunEvent";
import type { SettingsView } from "$lib/bindings/SettingsView";
import { settle } from "$lib/testing/settle";
import { COMMON_DEFAULTS } from "$lib/testing/methods";

const shell = vi.hoisted(() => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  const state = {
    engineHandler: null as null | ((event: { payload: unknown }) => void),
    askChannels: [] as { onmessage: (m: unknown) => void }[],
    askResolvers: [] as ((record: unknown) => void)[],
  };
  return { Channel, invoke: vi.fn(), state };
});

vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: shell.Channel }));
vi.mock("@tauri-apps/api/event", () => ({
  listen: vi.fn(async (_name: string, handler: (event: { payload: unknown }) => void) => {
    shell.state.engineHandler = handler;
    return () => {};
  }),
}));

const passage = {
  number: 1,
  chunk_id: 11,
  path: "/notes/rc.md",
  heading_path: "Rc > Counting",
  span_start: 10,
  span_end: 30,
  page: null,
  score: 0.87,
  text: "Rc counts references.",
};

const WHOLE_LIBRARY = { paths: [], collections: [], formats: [], since: null, tags: [] };
const IN_NOTES = { ...WHOLE_LIBRARY, paths: ["/notes"] };

function runRecord(id: number, method: string, thread = 9, question = "What does Rc do?", scope: object = WHOLE_LIBRARY) {
  return {
    id,
    thread_id: thread,
    turn: null,
    question,
    method,
    scope,
    params: {},
    model: {},
    status: "done",
    answer: "It **counts** references [1].",
    citations: method === "vanilla-rag" ? [{ ...passage, score: undefined, text: undefined }] : [],
    trace:
      method === "vanilla-rag"
        ? { method, query: "What does Rc do?", mode: "hybrid", k: 5, passages: [passage], unknown_citations: [] }
        : { method },
    error: null,
    timings: { total_ms: 850 },
    llm_calls: 1,
    prompt_tokens: 120,
    completion_tokens: 9,
    created_at: Date.UTC(2026, 10, 21),
    finished_at: Date.UTC(2026, 10, 21),
  };
}

const thread = { id: 9, title: "What does Rc do?", turns: 2, forked_from: null, created_at: 0, updated_at: 0 };

const responses: Record<string, (args: Record<string, unknown>) => unknown> = {
  app_info: () => ({
    version: "0.1.0",
    data_dir: "/data",
    config_file: "/config/folio.toml",
    first_run: true,
    model: { name: "SmolLM2-135M-Instruct (Q4_1)", server: null, bytes: 98_362_432, kit: true },
    api_key_storage: { kind: "keyring" },
  }),
  model_pace: () => ({ prompt_tokens_per_s: 900, tokens_per_s: 80, seconds_per_question: 3.2 }),
  found_models: () => ({ files: [], servers: [], passed_over: [] }),
  methods: () => [
    { id: "llm-only", name: "LLM only", summary: "The model alone.", retrieves: false, defaults: COMMON_DEFAULTS, options: [] },
    {
      id: "vanilla-rag",
      name: "Vanilla RAG",
      summary: "Retrieve, then answer.",
      retrieves: true,
      defaults: COMMON_DEFAULTS,
      options: [{ name: "mode", help: "Search mode", default: "hybrid", choices: ["dense", "bm25", "hybrid"] }],
    },
  ],
  library_overview: () => ({
    data_dir: "/data",
    folders: [{ id: 1, path: "/notes", documents: 3, errors: 1 }],
    counts: { documents: 3, errors: 1, nodes: 20, chunks: 7, embedded: 7 },
    errors: [{ path: "/notes/bad.pdf", error: "corrupt PDF: no trailer", set_aside: false }],
    jobs: [
      {
        id: 5,
        kind: "ingest",
        state: "running",
        interrupted: false,
        payload: {},
        done: 1,
        total: 4,
        failed: 0,
        active_ms: 500,
        rate: 2,
        eta_seconds: 1.5,
        error: null,
        owner_pid: 1,
        created_at: 0,
        updated_at: 0,
      },
    ],
    jobs_paused: false,
    watching: true,
  }),
  graph_status: () => ({ chunks: 7, rubrics: [], jobs: [] }),
  folder_documents: () => ({
    total: 1,
    documents: [
      {
        id: 1,
        path: "/notes/rc.md",
        format: "markdown",
        title: "Rc",
        hash: "h",
        size: 2048,
        mtime_ns: 0,
        status: "indexed",
        error: null,
        note: null,
      },
    ],
  }),
  document_tree: () => ({
    document: { id: 1, path: "/notes/rc.md", title: "Rc", status: "indexed" },
    tree: {
      nodes: [
        { parent: null, kind: "structure", depth: 0, text: "Rc", span: { start: 0, end: 4, page: null } },
        { parent: 0, kind: "content", depth: 1, text: "<b>Rc counts references.</b>", span: { start: 10, end: 30, page: null } },
        { parent: 0, kind: "content", depth: 1, text: "Unrelated.", span: { start: 31, end: 41, page: null } },
      ],
    },
  }),
  ask: (args) => {
    shell.state.askChannels.push(args.on_event as { onmessage: (m: unknown) => void });
    return new Promise((resolve) => shell.state.askResolvers.push(resolve));
  },
  threads: () => [thread],
  thread_detail: () => ({
    summary: thread,
    turns: [
      {
        run: runRecord(9, "vanilla-rag", 9, "What does Rc do?", IN_NOTES),
        calls: [{ step: "answer", prompt_tokens: 120, completion_tokens: 9, wall_ms: 800, finish: "stop", error: null }],
      },
      { run: runRecord(10, "llm-only", 9, "Is it thread-safe?", IN_NOTES), calls: [] },
    ],
    gone: [],
  }),
  export_run: () => "/home/me/answer.md",
  export_thread: () => "/home/me/thread.md",
  remove_folder: () => undefined,
  collections: () => [{ name: "work", folders: ["/notes"], tags: [], documents: 3 }],
  scope_size: (args) => {
    const scope = args.scope as typeof IN_NOTES;
    if (scope.paths.every((p) => p === "/notes")) return 3;
    throw { code: "invalid_input", message: `${scope.paths[0]} is not in the library`, details: null };
  },
  settings: () => ({
    backend: "embedded",
    model: "/kit/smollm2.gguf",
    base_url: "",
    has_api_key: false,
    context_size: 4096,
    temperature: 0.2,
    max_tokens: 512,
    embedding_backend: "embedded",
    embedding_model_dir: "/kit/minilm",
    embedding_base_url: "http://127.0.0.1:8080/v1",
    embedding_model: "",
    data_dir: "/data",
    config_file: "/config/folio.toml",
    kit_models: [
      {
        label: "SmolLM2-135M-Instruct (Q4_1)",
        path: "/kit/smollm2.gguf",
        bytes: 98_362_432,
        role: "for tests of plumbing: fast, answers poorly",
        default: false,
      },
    ],
    api_key_storage: { kind: "file", path: "/config/api-key" },
    ocr: { enabled: true, languages: ["eng"] },
    ocr_languages_installed: ["eng", "deu"],
    ocr_unavailable: null,
  }) satisfies SettingsView,
};

shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
  const respond = responses[command];
  if (!respond) throw { code: "internal", message: `unexpected command ${command}`, details: null };
  return respond(args);
});

// tauri.conf.json sets freezePrototype; the app and its libraries must cope.
Object.freeze(Object.prototype);
const { default: App } = await import("./App.svelte");
const { registerBuiltinTraceRenderers } = await import("$lib/traces/builtin");

const byTestId = (id: string) => document.querySelector<HTMLElement>(`[data-testid="${id}"]`);
const allByTestId = (id: string) => [...document.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];

function key(init: KeyboardEventInit, target: EventTarget = window) {
  target.dispatchEvent(new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init }));
}

function type(element: HTMLInputElement | HTMLTextAreaElement, value: string) {
  element.value = value;
  element.dispatchEvent(new Event("input", { bubbles: true }));
}

let app: ReturnType<typeof mount>;

beforeAll(async () => {
  // jsdom lays nothing out and has no modal dialogs.
  Element.prototype.scrollIntoView = () => {};
  vi.stubGlobal("matchMedia", () => ({ matches: false }));
  vi.stubGlobal(
    "ResizeObserver",
    class {
      observe() {}
      disconnect() {}
    },
  );
  HTMLDialogElement.prototype.showModal = function (this: HTMLDialogElement) {
    this.setAttribute("open", "");
  };
  HTMLDialogElement.prototype.close = function (this: HTMLDialogElement) {
    this.removeAttribute("open");
    this.dispatchEvent(new Event("close"));
  };
  registerBuiltinTraceRenderers();
  app = mount(App, { target: document.body });
  await settle(5);
});

afterAll(() => {
  unmount(app);
});

describe("the app against a fake shell", () => {
  /** The ask requests sent so far; other commands (polls, refreshes) interleave with them. */
  const asked = () => shell.invoke.mock.calls.filter(([c]) => c === "ask").map(([, args]) => args.request);

  it("is ready once app_info and methods have loaded, with the first-run panel", () => {
    expect(document.querySelector("main")?.dataset.ready).toBe("true");
    const card = byTestId("first-run")?.textContent?.replace(/\s+/g, " ");
    expect(card).toContain("Folio answers with SmolLM2-135M-Instruct (Q4_1), built in (94 MiB).");
    expect(card).toContain("On this computer a question takes about 3 s.");
    expect(byTestId("nav-library")?.closest("nav")?.textContent).toContain("SmolLM2-135M-Instruct (Q4_1)");
  });

  it("shows the library: counts, folders, errors and jobs with progress", async () => {
    expect(byTestId("overview-documents")?.textContent).toBe("3");
    expect(byTestId("overview-chunks")?.textContent).toBe("7");
    expect(allByTestId("folder-row")).toHaveLength(1);
    expect(document.body.textContent).toContain("corrupt PDF: no trailer");
    expect(allByTestId("job-row")).toHaveLength(1);
    expect((byTestId("job-progress") as HTMLProgressElement).value).toBe(25);

    const progress: EngineEvent = {
      type: "job_progress",
      job_id: 5,
      kind: "ingest",
      phase: "embedding",
      done: 3,
      total: 4,
      failed: 0,
      rate: 4,
      eta_seconds: 0.25,
    };
    shell.state.engineHandler?.({ payload: [progress] });
    await settle(5);
    expect((byTestId("job-progress") as HTMLProgressElement).value).toBe(75);
    expect(byTestId("job-row")?.textContent).toContain("4.0 docs/s");
  });

  it("lists a folder's documents on demand", async () => {
    const show = [...byTestId("folder-row")!.querySelectorAll("button")].find((b) => b.textContent?.includes("Show"));
    show?.click();
    await settle(5);
    expect(byTestId("folder-row")?.textContent).toContain("2.0 KiB");
    expect(shell.invoke).toHaveBeenCalledWith("folder_documents", { folder: "/notes", offset: 0, limit: 100 });
  });

  it("removes a folder only after confirmation", async () => {
    const removeButton = () =>
      [...byTestId("folder-row")!.querySelectorAll("button")].find((b) => b.textContent?.trim() === "Remove");
    removeButton()?.click();
    await settle(5);
    expect(document.querySelector("dialog")?.textContent).toContain("/notes");
    byTestId("confirm-cancel")?.click();
    await settle(5);
    expect(shell.invoke.mock.calls.some(([c]) => c === "remove_folder")).toBe(false);

    removeButton()?.click();
    await settle(5);
    byTestId("confirm-accept")?.click();
    await settle(5);
    expect(shell.invoke).toHaveBeenCalledWith("remove_folder", { path: "/notes" });
    expect(byTestId("toast")?.textContent).toContain("Removed /notes");
  });

  it("switches views with Ctrl+number, in the sidebar's order, and focuses the view's first field", async () => {
    const shortcuts = [...document.querySelectorAll<HTMLElement>('nav[aria-label="Views"] button')].map(
      (b) => `${b.dataset.testid} ${b.querySelector("kbd")?.textContent}`,
    );
    expect(shortcuts).toEqual([
      "nav-library Ctrl+1",
      "nav-search Ctrl+2",
      "nav-ask Ctrl+3",
      "nav-compare Ctrl+4",
      "nav-history Ctrl+5",
      "nav-evaluate Ctrl+6",
      "nav-settings Ctrl+7",
    ]);
    key({ key: "2", ctrlKey: true });
    await settle(5);
    expect(byTestId("nav-search")?.getAttribute("aria-current")).toBe("page");
    expect(document.activeElement).toBe(byTestId("search-query"));

    key({ key: "3", ctrlKey: true });
    await settle(5);
    expect(byTestId("question-input")).not.toBeNull();
    expect(document.activeElement).toBe(byTestId("question-input"));
    expect(byTestId("nav-ask")?.getAttribute("aria-current")).toBe("page");
  });

  it("streams an answer, renders it with citations and opens the cited source", async () => {
    const input = byTestId("question-input") as HTMLTextAreaElement;
    type(input, "What does Rc do?");
    key({ key: "Enter" }, input);
    await settle(5);
    const [call] = shell.invoke.mock.calls.filter(([c]) => c === "ask");
    expect(call[1].request).toEqual({
      question: "What does Rc do?",
      method: "vanilla-rag",
      k: null,
      temperature: null,
      max_tokens: null,
      options: {},
      scope: WHOLE_LIBRARY,
    });
    expect(byTestId("ask-cancel")).not.toBeNull();

    const events: RunEvent[] = [
      { type: "started", run_id: 9, thread_id: 9, method: "vanilla-rag" },
      { type: "retrieved", query: "What does Rc do?", passages: 1 },
      { type: "llm_started", step: "answer" },
      { type: "token", step: "answer", text: "It counts" },
    ];
    shell.state.askChannels[0].onmessage(events);
    await settle(5);
    expect(byTestId("answer")?.textContent).toContain("It counts");
    // Only a finished run has a status to report.
    expect(byTestId("answer-status")).toBeNull();
    expect(byTestId("trace-panel")?.textContent).toContain("writing");

    shell.state.askResolvers[0](runRecord(9, "vanilla-rag"));
    await settle(5);
    expect(byTestId("answer-status")?.textContent).toBe("done");
    expect(byTestId("answer")?.querySelector("strong")?.textContent).toBe("counts");
    expect(allByTestId("citation")).toHaveLength(1);
    // Done, the newest turn still shows how it was built: the stored trace.
    const trace = byTestId("trace-details") as HTMLDetailsElement;
    expect(trace.open).toBe(true);
    expect(byTestId("trace-panel")?.textContent).toContain("Rc > Counting");
    expect(byTestId("ask-cancel")).toBeNull();

    (byTestId("answer")?.querySelector("button.cite") as HTMLButtonElement).click();
    await settle(5);
    const viewer = byTestId("source-viewer");
    expect(viewer?.textContent).toContain("/notes/rc.md");
    const highlighted = allByTestId("source-highlight");
    expect(highlighted).toHaveLength(1);
    // Document text is text, never markup.
    expect(highlighted[0].textContent?.trim()).toBe("<b>Rc counts references.</b>");
    expect(viewer?.querySelector("b")).toBeNull();
    key({ key: "Escape" }, viewer!);
    await settle(5);
    expect(byTestId("source-viewer")).toBeNull();
  });

  it("asks a follow-up in the same thread, below the first turn, and starts a new thread on request", async () => {
    expect(byTestId("ask-thread")?.textContent).toBe("Thread 9");
    const input = byTestId("question-input") as HTMLTextAreaElement;
    expect(input.value).toBe("");
    // The composer is below the conversation.
    const [first] = allByTestId("ask-turn");
    expect(first.compareDocumentPosition(input) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();

    (byTestId("method-select") as HTMLSelectElement).value = "llm-only";
    byTestId("method-select")!.dispatchEvent(new Event("change", { bubbles: true }));
    type(input, "Is it thread-safe?");
    key({ key: "Enter" }, input);
    await settle(5);
    expect(asked()[1]).toEqual({
      question: "Is it thread-safe?",
      method: "llm-only",
      k: null,
      temperature: null,
      max_tokens: null,
      options: {},
      scope: WHOLE_LIBRARY,
      thread: 9,
    });
    const turns = allByTestId("ask-turn");
    expect(turns).toHaveLength(2);
    expect(turns[0].textContent).toContain("Vanilla RAG");
    expect(turns[1].textContent).toContain("LLM only");
    expect((byTestId("new-thread") as HTMLButtonElement).disabled).toBe(true);
    expect(byTestId("compare-follow-up")).toBeNull();

    shell.state.askChannels[1].onmessage([
      { type: "started", run_id: 10, thread_id: 9, method: "llm-only" },
      { type: "rewritten", rewrite: { kind: "standalone", query: "Is Rc thread-safe?" } },
    ] satisfies RunEvent[]);
    await settle(5);
    expect(turns[1].querySelector('[data-testid="rewrite-note"]')?.textContent).toBe("Searched as: Is Rc thread-safe?");
    shell.state.askResolvers[1](runRecord(10, "llm-only", 9, "Is it thread-safe?"));
    await settle(5);
    expect(allByTestId("answer-status").map((s) => s.textContent)).toEqual(["done", "done"]);

    (byTestId("new-thread") as HTMLButtonElement).click();
    await settle(5);
    expect(allByTestId("ask-turn")).toHaveLength(0);
    expect(byTestId("ask-thread")).toBeNull();
    expect(document.activeElement).toBe(input);
    type(input, "What is Arc?");
    key({ key: "Enter" }, input);
    await settle(5);
    expect(asked()[2].thread).toBeUndefined();
    shell.state.askResolvers[2](runRecord(12, "llm-only", 12, "What is Arc?"));
    await settle(5);
    expect(byTestId("ask-thread")?.textContent).toBe("Thread 12");
  });

  it("compares a follow-up of the Ask thread, every method in a branch of it", async () => {
    type(byTestId("question-input") as HTMLTextAreaElement, "And Rc?");
    byTestId("compare-follow-up")?.click();
    await settle(5);
    expect(byTestId("nav-compare")?.getAttribute("aria-current")).toBe("page");
    expect(byTestId("compare-thread")?.textContent).toContain("Following up thread 12: What is Arc?");
    expect((byTestId("compare-question") as HTMLTextAreaElement).value).toBe("And Rc?");
    (byTestId("compare-method-llm-only") as HTMLInputElement).click();
    (byTestId("compare-method-vanilla-rag") as HTMLInputElement).click();
    await settle(5);
    (byTestId("compare-run") as HTMLButtonElement).click();
    await settle(5);
    expect(asked().slice(3).map((r) => [r.method, r.thread, r.fork])).toEqual([
      ["llm-only", 12, true],
      ["vanilla-rag", 12, true],
    ]);
    shell.state.askResolvers[3](runRecord(13, "llm-only", 13, "And Rc?"));
    shell.state.askResolvers[4](runRecord(14, "vanilla-rag", 14, "And Rc?"));
    await settle(5);
    byTestId("compare-thread-clear")?.click();
    await settle(5);
    expect(byTestId("compare-thread")).toBeNull();
  });

  it("compares methods side by side, each through its own channel", async () => {
    byTestId("nav-compare")?.click();
    await settle(5);
    type(byTestId("compare-question") as HTMLTextAreaElement, "What does Rc do?");
    (byTestId("compare-run") as HTMLButtonElement).click();
    await settle(5);
    expect(allByTestId("compare-column")).toHaveLength(2);
    expect(shell.state.askChannels).toHaveLength(7);
    expect(shell.state.askChannels[5]).not.toBe(shell.state.askChannels[6]);
    expect(asked().slice(5).map((r) => r.thread)).toEqual([undefined, undefined]);
    shell.state.askResolvers[5](runRecord(15, "llm-only"));
    shell.state.askResolvers[6](runRecord(16, "vanilla-rag"));
    await settle(5);
    const footers = allByTestId("compare-footer").map((f) => f.textContent ?? "");
    expect(footers).toHaveLength(2);
    for (const footer of footers) {
      expect(footer).toContain("1 LLM call");
      expect(footer).toContain("120 + 9 tokens");
      expect(footer).toContain("850 ms");
    }
  });

  it("shows the most recent thread turn by turn, exports a turn and the thread, and continues it in Ask within its scope", async () => {
    byTestId("nav-history")?.click();
    await settle(5);
    expect(allByTestId("history-row")).toHaveLength(1);
    expect(byTestId("history-row")?.textContent).toContain("2 turns");
    // The most recent thread opens by itself.
    expect(allByTestId("history-turn").map((t) => t.querySelector("h3")?.textContent)).toEqual([
      "What does Rc do?",
      "Is it thread-safe?",
    ]);
    // Both turns were asked within one folder.
    expect(allByTestId("turn-scope").map((s) => s.textContent?.trim())).toEqual(["Scope: in notes", "Scope: in notes"]);
    const trace = byTestId("trace-details") as HTMLDetailsElement;
    trace.open = true;
    trace.dispatchEvent(new Event("toggle"));
    await settle(5);
    expect(document.body.textContent).toContain("Model calls");
    byTestId("history-export")?.click();
    await settle(5);
    byTestId("thread-export")?.click();
    await settle(5);
    const toasts = allByTestId("toast").map((t) => t.textContent);
    expect(toasts).toContainEqual(expect.stringContaining("Exported to /home/me/answer.md"));
    expect(toasts).toContainEqual(expect.stringContaining("Exported to /home/me/thread.md"));
    expect(shell.invoke).toHaveBeenCalledWith("export_thread", { id: 9 });

    byTestId("thread-continue")?.click();
    await settle(5);
    expect(byTestId("nav-ask")?.getAttribute("aria-current")).toBe("page");
    expect(allByTestId("ask-turn")).toHaveLength(2);
    expect(byTestId("ask-thread")?.textContent).toBe("Thread 9");
    // The conversation goes on within the scope it was asked in.
    expect(byTestId("scope-summary")?.textContent).toBe("in notes");
    await vi.waitFor(() => expect(byTestId("scope-status")?.textContent?.trim()).toBe("3 documents"));
    const input = byTestId("question-input") as HTMLTextAreaElement;
    type(input, "And Arc?");
    key({ key: "Enter" }, input);
    await settle(5);
    const followUp = shell.invoke.mock.calls.filter(([c]) => c === "ask").at(-1)?.[1].request;
    expect([followUp.thread, followUp.scope]).toEqual([9, IN_NOTES]);
    shell.state.askResolvers.at(-1)!(runRecord(17, "vanilla-rag", 9, "And Arc?"));
    await settle(5);
  });

  it("shows settings with the key-file warning and validates before saving", async () => {
    byTestId("nav-settings")?.click();
    await settle(5);
    expect((byTestId("settings-backend-embedded") as HTMLInputElement).checked).toBe(true);
    (byTestId("settings-backend-openai") as HTMLInputElement).click();
    await settle(5);
    expect(document.body.textContent).toContain("No OS keyring available; the key is stored in /config/api-key");
    (byTestId("settings-save") as HTMLButtonElement).click();
    await settle(5);
    expect(document.body.textContent).toContain("Enter the server's API root");
    expect(shell.invoke.mock.calls.some(([c]) => c === "save_settings")).toBe(false);
  });
});
