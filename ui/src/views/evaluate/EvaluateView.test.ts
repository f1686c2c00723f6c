// The Evaluate view against a fake shell: the form's checks, the progress
// of a running evaluation, the report with its table and chart, two of its
// specs compared, and a question's runs side by side.
import { flushSync, mount, tick, unmount } from "svelte";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { EvalDiff } from "$lib/bindings/EvalDiff";
import type { EvalEvent } from "$lib/bindings/EvalEvent";
import type { EvalReport } from "$lib/bindings/EvalReport";
import { settle, type } from "$lib/testing/settle";
import { COMMON_DEFAULTS } from "$lib/testing/methods";

const shell = vi.hoisted(() => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  return { invoke: vi.fn(), Channel };
});
vi.mock("@tauri-apps/api/core", () => shell);

const { default: EvaluateView } = await import("../EvaluateView.svelte");
const { app } = await import("$lib/stores/app.svelte");
const { defaultEvalForm, evaluation } = await import("$lib/stores/evaluate.svelte");
const { toasts } = await import("$lib/stores/toasts.svelte");
const { expectInert, expectVisible, HOSTILE, HOSTILE_PAYLOADS, hostileRun } = await import("$lib/testing/hostile");
const { evalDiff, noScoring, report, row, runRecord, specSummary, storedRuns } = await import("./testing");

type Pending = { events: (event: EvalEvent) => void; finish: (report: EvalReport) => void; fail: (e: unknown) => void };

let pending: Pending | null;
let current: EvalReport;
let currentDiff: EvalDiff;
let storedRun: typeof runRecord;

beforeAll(() => {
  // jsdom lays nothing out.
  Element.prototype.scrollIntoView = () => {};
});

beforeEach(() => {
  pending = null;
  current = report();
  currentDiff = evalDiff();
  storedRun = runRecord;
  localStorage.clear();
  toasts.splice(0);
  app.methods = [
    { id: "llm-only", name: "LLM only", summary: "The model alone.", retrieves: false, defaults: COMMON_DEFAULTS, options: [] },
    { id: "vanilla-rag", name: "Vanilla RAG", summary: "Retrieve, then answer.", retrieves: true, defaults: COMMON_DEFAULTS, options: [] },
  ];
  Object.assign(evaluation, {
    form: defaultEvalForm(),
    formErrors: {},
    running: false,
    cancelling: false,
    runError: null,
    openError: null,
    report: null,
    filter: "all",
    selected: null,
    runs: [],
  });
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
    switch (command) {
      case "start_eval": {
        const channel = args.on_event as { onmessage: (event: EvalEvent) => void };
        return new Promise((finish, fail) => (pending = { events: (e) => channel.onmessage(e), finish, fail }));
      }
      case "cancel_eval":
        return undefined;
      case "eval_report":
        return structuredClone(current);
      case "eval_runs":
        return storedRuns(current.questions.find((q) => q.id === args.question_id)!, storedRun);
      case "eval_diff":
        return structuredClone(currentDiff);
      case "export_eval_report":
        return "/home/me/hotpot.md";
      default:
        throw { code: "internal", message: `unexpected command ${command}`, details: null };
    }
  });
});

const mounted: (() => void)[] = [];

afterEach(() => {
  for (const destroy of mounted.splice(0)) destroy();
});

/** Mounted in the document: a form outside it never submits. */
async function view() {
  const target = document.body.appendChild(document.createElement("div"));
  const instance = mount(EvaluateView, { target });
  let mountedNow = true;
  const destroy = () => {
    if (!mountedNow) return;
    mountedNow = false;
    unmount(instance);
    target.remove();
  };
  mounted.push(destroy);
  await settle();
  return { target, destroy };
}

const text = (el: Element | null | undefined) => el?.textContent?.replace(/\s+/g, " ").trim() ?? "";
const byTestId = <T extends HTMLElement = HTMLElement>(root: Element, id: string) =>
  root.querySelector<T>(`[data-testid="${id}"]`);
const allByTestId = (root: Element, id: string) => [...root.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`)];
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command);

async function fillAndStart(target: HTMLElement) {
  type(byTestId(target, "eval-dataset")!, "/data/hotpot-dev.jsonl");
  type(byTestId(target, "eval-corpus")!, "/data/hotpot-corpus.jsonl");
  type(byTestId(target, "eval-out")!, "/evals/hotpot");
  byTestId(target, "eval-method-vanilla-rag")!.click();
  byTestId(target, "eval-start")!.click();
  await settle();
}

/** Opens the shell's current report the way "Open report…" ends. */
async function withReport(target: HTMLElement) {
  await evaluation.load("/evals/hotpot");
  await settle();
  return byTestId(target, "eval-report")!;
}

describe("EvaluateView", () => {
  it("names what is missing next to each field, and sends nothing", async () => {
    const { target } = await view();
    expect(byTestId(target, "eval-dataset")!.hasAttribute("data-autofocus")).toBe(true);
    byTestId(target, "eval-start")!.click();
    await settle();
    expect(calls("start_eval")).toHaveLength(0);
    const errors = [...target.querySelectorAll(".field-error")].map(text);
    expect(errors).toEqual([
      "Choose the dataset: a JSON-lines file of questions and gold answers.",
      "Choose the corpus: a JSON-lines file, or a folder of documents.",
      "Choose a folder for the answers and the report.",
      "Choose at least one method, or type a spec.",
    ]);
    const dataset = byTestId<HTMLInputElement>(target, "eval-dataset")!;
    expect(dataset.getAttribute("aria-invalid")).toBe("true");
    expect(document.getElementById(dataset.getAttribute("aria-describedby")!)?.textContent).toMatch(/^Choose the dataset/);
    for (const id of ["eval-tags", "eval-limit", "eval-k", "eval-temperature", "eval-max-tokens", "eval-seed", "eval-concurrency"]) {
      const input = byTestId<HTMLInputElement>(target, id)!;
      expect(input.id).toBe(id);
      expect(target.querySelector(`label[for="${id}"]`)).not.toBeNull();
    }
    expect(byTestId<HTMLInputElement>(target, "eval-k")!.placeholder).toBe("method's");

    type(byTestId(target, "eval-extra-specs")!, "pager:parallel");
    type(byTestId(target, "eval-k")!, "0");
    await fillAndStart(target);
    expect(calls("start_eval")).toHaveLength(0);
    expect([...target.querySelectorAll(".field-error")].map(text)).toEqual([
      "“pager:parallel” is not a spec: write method or method:option=value, separated by commas.",
      "A whole number of at least 1, or empty for each method's own.",
    ]);
  });

  it("sends the form, follows the evaluation's progress, and shows its report", async () => {
    const { target, destroy } = await view();
    type(byTestId(target, "eval-extra-specs")!, "pager:variant=parallel");
    type(byTestId(target, "eval-limit")!, "3");
    type(byTestId(target, "eval-seed")!, "7");
    type(byTestId(target, "eval-tags")!, "#garden/fruit, recipes");
    byTestId(target, "eval-judge")!.click();
    await fillAndStart(target);
    expect(calls("start_eval")[0][1].form).toEqual({
      dataset: "/data/hotpot-dev.jsonl",
      corpus: "/data/hotpot-corpus.jsonl",
      out: "/evals/hotpot",
      methods: ["vanilla-rag", "pager:variant=parallel"],
      fresh: false,
      judge: true,
      tags: ["garden/fruit", "recipes"],
      limit: 3,
      seed: 7,
    });
    expect(byTestId<HTMLButtonElement>(target, "eval-start")!.disabled).toBe(true);
    expect(byTestId<HTMLInputElement>(target, "eval-dataset")!.closest("fieldset")!.disabled).toBe(true);
    const progress = () => byTestId(target, "eval-progress")!;
    expect(text(byTestId(progress(), "eval-stage"))).toBe("Starting…");

    pending!.events({ kind: "notice", text: "The corpus was written out: 40 passages." });
    pending!.events({ kind: "stage", stage: "indexing" });
    pending!.events({
      kind: "indexing",
      progress: { job_id: 1, kind: "ingest", phase: "embedding", done: 10, total: 40, failed: 0, rate: null, eta_seconds: null },
    });
    flushSync();
    expect(text(byTestId(progress(), "eval-stage"))).toBe("Indexing the corpus (embedding)");
    const bar = progress().querySelector("progress")!;
    expect([bar.max, bar.value]).toEqual([40, 10]);
    expect(text(byTestId(progress(), "eval-progress-count"))).toBe("10 of 40 documents");
    expect(text(progress().querySelector(".notices"))).toBe("The corpus was written out: 40 passages.");

    pending!.events({ kind: "stage", stage: "preparing" });
    pending!.events({ kind: "graph_scoring", progress: { ...noScoring, done: 2, total: 8 } });
    flushSync();
    expect(text(byTestId(progress(), "eval-stage"))).toBe("Preparing the model and graphs");
    expect(text(byTestId(progress(), "eval-progress-count"))).toBe("2 of 8 chunks scored");

    pending!.events({ kind: "stage", stage: "answering" });
    const answered = (done: number, spec: string, id: string, status: "done" | "failed", cover: boolean): EvalEvent => ({
      kind: "answered",
      done,
      total: 6,
      row: row(id, spec, null, { status, cover_em: cover }),
    });
    pending!.events(answered(1, "vanilla-rag", "q1", "done", true));
    pending!.events(answered(2, "pager:variant=parallel", "q1", "failed", false));
    flushSync();
    expect(text(byTestId(progress(), "eval-stage"))).toBe("Answering");
    expect([...byTestId(progress(), "eval-log")!.querySelectorAll("li")].map(text)).toEqual([
      "[1/6] vanilla-rag q1 · covered",
      "[2/6] pager:variant=parallel q1 · failed",
    ]);
    expect(byTestId(progress(), "eval-log")!.querySelector("li.failed")).not.toBeNull();
    expect(text(progress())).toContain("1 answer failed so far");
    expect(target.querySelector(".error-notice")).toBeNull();

    // Leaving the view and coming back shows the same progress.
    destroy();
    const again = await view();
    expect(text(byTestId(byTestId(again.target, "eval-progress")!, "eval-stage"))).toBe("Answering");
    expect(byTestId(again.target, "eval-log")!.querySelectorAll("li")).toHaveLength(2);

    byTestId(again.target, "eval-cancel")!.click();
    await settle();
    expect(calls("cancel_eval")).toHaveLength(1);
    expect(byTestId<HTMLButtonElement>(again.target, "eval-cancel")!.disabled).toBe(true);
    pending!.finish(report({ interrupted: true }));
    await settle();
    expect(byTestId(again.target, "eval-progress")).toBeNull();
    expect(byTestId(again.target, "eval-cancel")).toBeNull();
    expect(text(byTestId(again.target, "eval-interrupted"))).toMatch(/^Interrupted: not every question was answered/);
    expect(JSON.parse(localStorage.getItem("folio.evalForm")!)).toMatchObject({ out: "/evals/hotpot", limit: 3 });
  });

  it("says why an evaluation stopped, with what to do", async () => {
    const { target } = await view();
    await fillAndStart(target);
    pending!.fail({ code: "eval_mismatch", message: "/evals/hotpot holds another evaluation's answers", details: null });
    await settle();
    const notice = target.querySelector(".error-notice")!;
    expect(text(notice)).toContain("/evals/hotpot holds another evaluation's answers");
    expect(text(notice)).toContain("tick “Start over”");

    byTestId(target, "eval-start")!.click();
    await settle();
    expect(calls("start_eval")).toHaveLength(2);
    pending!.fail({ code: "cancelled", message: "cancelled while indexing", details: null });
    await settle();
    expect(target.querySelector(".error-notice")).toBeNull();
    expect(text(byTestId(target, "eval-cancelled"))).toMatch(/^Cancelled before any question was answered/);
  });

  it("shows the report's header, one summary row per spec, and no judge column without a judge", async () => {
    const { target } = await view();
    const panel = await withReport(target);
    expect(text(panel.querySelector("h2"))).toBe("Report: hotpot-dev.jsonl");
    expect(text(byTestId(panel, "eval-report-questions"))).toBe("3 questions from /data/hotpot-dev.jsonl");
    expect(text(byTestId(panel, "eval-report-settings"))).toBe(
      "k 5, temperature 0.2, at most 512 tokens a step, seed 7",
    );
    expect(text(panel)).toContain("qwen2.5:7b-instruct (openai)");
    expect(text(panel)).toContain("/evals/hotpot");
    expect(byTestId(panel, "eval-interrupted")).toBeNull();

    const table = byTestId(panel, "eval-summary")!;
    const headers = [...table.querySelectorAll("thead th")].map(text);
    expect(headers).not.toContain("LLM judge* %");
    // Summaries recorded before sources were scored, or cached tokens
    // counted, keep the table's width.
    expect(headers).not.toContain("With a source %");
    expect(headers).not.toContain("Computed / sent");
    const rows = allByTestId(table, "eval-summary-row");
    expect(rows.map((r) => text(r.querySelector("th")))).toEqual(["vanilla-rag", "pager:variant=parallel"]);
    const cells = [...rows[0].querySelectorAll("td")].map(text);
    const column = (name: string) => cells[headers.indexOf(name) - 1];
    expect(column("Cover-EM %")).toBe("66.7");
    expect(column("EM %")).toBe("33.3");
    expect(column("Recall %")).toBe("—");
    expect(column("LLM calls")).toBe("1.0 (1–1)");
    expect(column("Prompt tok/q")).toBe("800");
    expect(column("Wall p50 (s)")).toBe("1.2");
    expect(column("Wall p95 (s)")).toBe("3.0");
    expect(byTestId(panel, "eval-judge-note")).toBeNull();
  });

  it("adds the judge's column, with its footnote, when answers were judged", async () => {
    current = report({
      judge: "qwen2.5:32b-instruct",
      methods: [specSummary("vanilla-rag", { judge_percent: 71.4 }), specSummary("llm-only", { judge_percent: null })],
    });
    const { target } = await view();
    const panel = await withReport(target);
    const table = byTestId(panel, "eval-summary")!;
    expect([...table.querySelectorAll("thead th")].map(text).at(-1)).toBe("LLM judge* %");
    expect(allByTestId(table, "eval-summary-row").map((r) => text(r.querySelector("td:last-child")))).toEqual([
      "71.4",
      "—",
    ]);
    expect(text(byTestId(panel, "eval-judge-note"))).toBe(
      "* Judged by qwen2.5:32b-instruct: a model's opinion of whether each answer is right, not a string match.",
    );
  });

  it("adds the source columns when sources were scored, with dashes for a spec without them", async () => {
    current = report({
      methods: [
        specSummary("vanilla-rag", {
          sources: {
            sourced_percent: 83.333,
            cited: { precision_percent: 75, recall_percent: 40 },
            attributed: { precision_percent: null, recall_percent: 12.5 },
          },
        }),
        specSummary("llm-only"),
      ],
    });
    const { target } = await view();
    const panel = await withReport(target);
    const table = byTestId(panel, "eval-summary")!;
    const headers = [...table.querySelectorAll("thead th")].map(text);
    const sourceColumns = ["With a source %", "Cited P / R %", "Attributed P / R %"];
    const at = headers.indexOf("Recall %");
    expect(headers.slice(at + 1, at + 4)).toEqual(sourceColumns);
    const cells = allByTestId(table, "eval-summary-row").map((r) =>
      sourceColumns.map((name) => text(r.querySelectorAll("td")[headers.indexOf(name) - 1])),
    );
    expect(cells).toEqual([
      ["83.3", "75.0 / 40.0", "— / 12.5"],
      ["—", "— / —", "— / —"],
    ]);
  });

  it("adds the computed-over-sent column when the cache was counted", async () => {
    current = report({
      methods: [specSummary("rdr2", { computed_ratio: 0.4567 }), specSummary("llm-only")],
    });
    const { target } = await view();
    const panel = await withReport(target);
    const table = byTestId(panel, "eval-summary")!;
    const headers = [...table.querySelectorAll("thead th")].map(text);
    const at = headers.indexOf("Computed / sent");
    expect(headers[at - 1]).toBe("Prompt tok/q");
    expect(allByTestId(table, "eval-summary-row").map((r) => text(r.querySelectorAll("td")[at - 1]))).toEqual([
      "0.46×",
      "—",
    ]);
  });

  it("shows the conversations' last turns in a second table, only when the dataset has conversations", async () => {
    const first = await view();
    let panel = await withReport(first.target);
    expect(byTestId(panel, "eval-last-turns")).toBeNull();
    expect(text(panel)).not.toContain("Last turn of each conversation");
    first.destroy();

    current = report({
      last_turns: [specSummary("vanilla-rag", { n: 2, cover_em_percent: 50 }), specSummary("llm-only", { n: 2 })],
    });
    const second = await view();
    panel = await withReport(second.target);
    const table = byTestId(panel, "eval-last-turns")!;
    expect(table).not.toBeNull();
    expect(text(table.closest("section")!.querySelector("h3"))).toBe("Last turn of each conversation");
    const rows = allByTestId(table, "eval-summary-row");
    expect(rows.map((r) => text(r.querySelector("th")))).toEqual(["vanilla-rag", "llm-only"]);
    const headers = [...table.querySelectorAll("thead th")].map(text);
    expect(text(rows[0].querySelectorAll("td")[headers.indexOf("Cover-EM %") - 1])).toBe("50.0");
    // The main table still holds every question's rows.
    expect(allByTestId(byTestId(panel, "eval-summary")!, "eval-summary-row")).toHaveLength(2);
  });

  it("charts accuracy against tokens, one labelled point per spec", async () => {
    const { target } = await view();
    const panel = await withReport(target);
    const chart = byTestId(panel, "eval-chart")!;
    const svg = chart.querySelector("svg")!;
    expect(svg.getAttribute("role")).toBe("img");
    expect(svg.getAttribute("aria-label")).toBe(
      "Cover-EM against mean tokens per question: vanilla-rag 66.7% at 832 tokens; pager:variant=parallel 33.4% at 3,232 tokens",
    );
    expect(text(svg.querySelector(":scope > title"))).toBe("Accuracy (Cover-EM) against tokens per question");
    const points = allByTestId(chart, "eval-chart-point");
    expect(points.map((p) => text(p.querySelector("text")))).toEqual(["vanilla-rag", "pager:variant=parallel"]);
    expect(text(chart)).toContain("Mean tokens per question (prompt + completion)");
    expect(text(chart)).toContain("Cover-EM (%)");
    expect(chart.querySelectorAll("[style]")).toHaveLength(0);
  });

  it("shows tokens a server did not report as unknown, in the table and off the chart", async () => {
    current = report();
    current.summary.methods[1].prompt_tokens_mean = null;
    current.summary.methods[1].completion_tokens_mean = null;
    const { target } = await view();
    const panel = await withReport(target);
    const cells = allByTestId(panel, "eval-summary-row").map((r) => [...r.querySelectorAll("td")].map(text));
    expect(cells[0].slice(10, 12)).toEqual(["800", "32"]);
    expect(cells[1].slice(10, 12)).toEqual(["—", "—"]);
    expect(text(byTestId(panel, "eval-tokens-note"))).toContain("reported no token counts");
    const chart = byTestId(panel, "eval-chart")!;
    expect(allByTestId(chart, "eval-chart-point").map((p) => p.dataset.spec)).toEqual(["vanilla-rag"]);
    expect(chart.querySelector("svg")!.getAttribute("aria-label")).toBe(
      "Cover-EM against mean tokens per question: vanilla-rag 66.7% at 832 tokens",
    );
    expect(text(byTestId(chart, "eval-chart-uncharted"))).toBe(
      "Not charted (the model's server reported no token counts): pager:variant=parallel",
    );

    // With no spec to place, no empty plot is drawn.
    current.summary.methods[0].prompt_tokens_mean = null;
    current.summary.methods[0].completion_tokens_mean = null;
    const none = byTestId(await withReport(target), "eval-chart")!;
    expect(none.querySelector("svg")).toBeNull();
    expect(text(byTestId(none, "eval-chart-uncharted"))).toBe(
      "Not charted (the model's server reported no token counts): vanilla-rag, pager:variant=parallel",
    );
  });

  it("exports the report and says where it went", async () => {
    const { target } = await view();
    await withReport(target);
    byTestId(target, "eval-export")!.click();
    await settle();
    expect(calls("export_eval_report")).toEqual([["export_eval_report", { out: "/evals/hotpot" }]]);
    expect(toasts.map((t) => t.message)).toEqual(["Exported to /home/me/hotpot.md"]);
  });

  it("marks each spec's outcome per question, and filters to disagreements or misses", async () => {
    const { target } = await view();
    await withReport(target);
    const list = byTestId(target, "eval-questions")!;
    const marks = (row: HTMLElement) => allByTestId(row, "eval-mark").map(text);
    const rows = () => allByTestId(list, "eval-question");
    expect(rows().map((r) => text(byTestId(r, "eval-question-open")))).toEqual([
      "q1 Who wrote Middlemarch?",
      "q2 Where is the Mauritshuis?",
      "q3 (dataset file not readable)",
    ]);
    expect(text(rows()[0].querySelector(".golds"))).toBe("George Eliot · Mary Ann Evans");
    expect(rows().map(marks)).toEqual([
      ["✓covered", "✓covered"],
      ["✓covered", "failed"],
      ["✗not covered", "✗not covered"],
    ]);
    byTestId(list, "eval-filter-disagree")!.click();
    flushSync();
    expect(rows().map((r) => r.querySelector(".id")?.textContent)).toEqual(["q2"]);
    expect(text(byTestId(list, "eval-questions-count"))).toBe("1 question of 3");
    byTestId(list, "eval-filter-uncovered")!.click();
    flushSync();
    expect(rows().map((r) => r.querySelector(".id")?.textContent)).toEqual(["q3"]);
    expect(byTestId(list, "eval-filter-uncovered")!.getAttribute("aria-pressed")).toBe("true");
  });

  it("opens a question's runs side by side, one column per spec", async () => {
    const { target } = await view();
    await withReport(target);
    const open = (i: number) => allByTestId(target, "eval-question-open")[i];
    expect(open(0).tagName).toBe("BUTTON");
    open(0).click();
    await settle();
    expect(calls("eval_runs")).toEqual([["eval_runs", { out: "/evals/hotpot", question_id: "q1" }]]);
    expect(open(0).getAttribute("aria-expanded")).toBe("true");
    const runs = byTestId(target, "eval-runs")!;
    expect(text(runs.querySelector("h2"))).toBe("q1 Who wrote Middlemarch?");
    const columns = allByTestId(runs, "eval-run-column");
    expect(columns.map((c) => text(c.querySelector("h3")))).toEqual(["vanilla-rag", "pager:variant=parallel"]);
    expect(text(columns[0].querySelector(".golds"))).toBe("Gold: George Eliot · Mary Ann Evans");
    expect(text(byTestId(columns[0], "answer"))).toBe("Run 11: George Eliot wrote it.");
    expect(text(byTestId(columns[1], "answer"))).toBe("Run 12: George Eliot wrote it.");
    expect(text(byTestId(columns[0], "answer-status"))).toBe("done");
    expect(byTestId(columns[1], "trace-panel")).not.toBeNull();
    expect(text(byTestId(columns[0], "eval-run-footer"))).toBe(
      "1 LLM call 800 + 30 tokens 1.2 s Cover-EM ✓ EM ✓ F1 100%",
    );

    // A request that failed before a run was stored has only its error.
    open(1).click();
    await settle();
    expect(calls("eval_runs").at(-1)).toEqual(["eval_runs", { out: "/evals/hotpot", question_id: "q2" }]);
    const failed = allByTestId(byTestId(target, "eval-runs")!, "eval-run-column")[1];
    expect(text(byTestId(failed, "eval-run-error"))).toBe("the model server did not answer");
    expect(byTestId(failed, "answer")).toBeNull();
    expect(text(byTestId(failed, "eval-run-footer"))).toContain("Cover-EM ✗ EM ✗ F1 0%");

    open(1).click();
    await settle();
    expect(byTestId(target, "eval-runs")).toBeNull();
  });

  it("shows a row's own answer where the index no longer holds its run", async () => {
    const { target } = await view();
    await withReport(target);
    shell.invoke.mockImplementation(async (command: string) =>
      command === "eval_runs" ? storedRuns(current.questions[0]).slice(1) : undefined,
    );
    allByTestId(target, "eval-question-open")[0].click();
    await settle();
    const [missing, stored] = allByTestId(byTestId(target, "eval-runs")!, "eval-run-column");
    expect(text(missing)).toContain("Run #11 is not in this evaluation's index");
    expect(text(missing.querySelector(".answer"))).toBe("Answer of vanilla-rag to q1");
    expect(byTestId(missing, "trace-panel")).toBeNull();
    expect(text(byTestId(stored, "answer"))).toBe("Run 12: George Eliot wrote it.");
  });

  it("keeps document and model text inert in the progress, the report, the questions and their runs", async () => {
    const { target } = await view();
    await fillAndStart(target);
    pending!.events({ kind: "notice", text: HOSTILE });
    flushSync();
    const progress = byTestId(target, "eval-progress")!;
    expectInert(progress);
    expectVisible(progress);

    current.summary.dataset = `/data/${HOSTILE}`;
    current.summary.corpus = `/data/${HOSTILE}`;
    current.questions[0].question = HOSTILE;
    current.questions[0].golds = [HOSTILE];
    current.questions[1].rows[0].answer = HOSTILE;
    current.questions[1].rows[1].error = HOSTILE;
    storedRun = (id, method) => ({ ...hostileRun(null, method), id, status: "done" });
    pending!.finish(structuredClone(current));
    await settle();
    allByTestId(target, "eval-question-open")[1].click();
    await settle();
    for (const id of ["eval-report", "eval-questions", "eval-runs"]) expectInert(byTestId(target, id)!);
    expectVisible(byTestId(target, "eval-report")!);
    expectVisible(allByTestId(target, "eval-question")[0]);
    const [stored, failed] = allByTestId(target, "eval-run-column");
    expectVisible(byTestId(stored, "answer")!, HOSTILE_PAYLOADS);
    expectVisible(byTestId(failed, "eval-run-error")!);
  });

  it("compares two specs question by question: the counts, then each list with both answers and their trace lines", async () => {
    const { target } = await view();
    const panel = byTestId(await withReport(target), "eval-diff")!;
    expect(text(panel.querySelector("h3"))).toBe("Compare two methods");
    const select = (id: string) => byTestId<HTMLSelectElement>(panel, id)!;
    expect([select("eval-diff-a").value, select("eval-diff-b").value, select("eval-diff-right-by").value]).toEqual([
      "vanilla-rag",
      "pager:variant=parallel",
      "cover-em",
    ]);
    expect([...select("eval-diff-a").options].map((o) => o.value)).toEqual(["vanilla-rag", "pager:variant=parallel"]);
    expect([...select("eval-diff-right-by").options].map(text)).toEqual(["Cover-EM", "EM"]);
    for (const id of ["eval-diff-a", "eval-diff-b", "eval-diff-right-by"]) {
      expect(target.querySelector(`label[for="${id}"]`)).not.toBeNull();
    }
    expect(byTestId(panel, "eval-diff-counts")).toBeNull();
    expect(calls("eval_diff")).toHaveLength(0);

    // While the shell reads the traces the button says so.
    let answer: (diff: EvalDiff) => void = () => {};
    const fallback = shell.invoke.getMockImplementation()!;
    shell.invoke.mockImplementation((command: string, args?: Record<string, unknown>) =>
      command === "eval_diff" ? new Promise((resolve) => (answer = resolve)) : fallback(command, args),
    );
    const run = byTestId<HTMLButtonElement>(panel, "eval-diff-run")!;
    run.click();
    await settle();
    expect(calls("eval_diff")).toEqual([
      ["eval_diff", { out: "/evals/hotpot", a: "vanilla-rag", b: "pager:variant=parallel", right_by: "cover-em" }],
    ]);
    expect([run.disabled, text(run)]).toEqual([true, "Comparing…"]);
    answer(evalDiff());
    await settle();
    expect([run.disabled, text(run)]).toEqual([false, "Compare"]);

    expect(text(byTestId(panel, "eval-diff-counts"))).toBe(
      "Compared 3 questions by Cover-EM · both right 1 · both wrong 0 · only vanilla-rag right 1 · only pager:variant=parallel right 1",
    );
    const onlyA = byTestId(panel, "eval-diff-only-a")!;
    const onlyB = byTestId(panel, "eval-diff-only-b")!;
    expect(text(onlyA.querySelector("h4"))).toBe("Only vanilla-rag right (1)");
    expect(text(onlyB.querySelector("h4"))).toBe("Only pager:variant=parallel right (1)");

    const [q2] = allByTestId(onlyA, "eval-diff-parting");
    expect(allByTestId(onlyA, "eval-diff-parting")).toHaveLength(1);
    expect(text(q2.querySelector(".question"))).toBe("q2 Where is the Mauritshuis?");
    expect(text(q2.querySelector(".golds"))).toBe("Gold: The Hague");
    const [a, b] = allByTestId(q2, "eval-diff-side");
    expect([a.dataset.side, b.dataset.side]).toEqual(["a", "b"]);
    expect(text(a.querySelector(".side-head"))).toBe("A vanilla-rag ✓right");
    expect(text(byTestId(a, "eval-diff-answer"))).toBe("It is in The Hague.");
    expect([...byTestId(a, "eval-diff-trace")!.querySelectorAll("li")].map(text)).toEqual([
      "searched: hybrid, 5 passages",
      "passages: [1] mauritshuis.md",
    ]);
    // A failed request has its status and error, and no trace.
    expect(text(b.querySelector(".side-head"))).toBe("B pager:variant=parallel ✗wrong failed");
    expect(byTestId(b, "eval-diff-answer")).toBeNull();
    expect(text(byTestId(b, "eval-diff-error"))).toBe("the model server did not answer");
    expect(byTestId(b, "eval-diff-trace")).toBeNull();
    expect(text(b)).toContain("No trace: the run is not in this evaluation's index.");

    // A question the dataset no longer holds is named by its id.
    const [q3] = allByTestId(onlyB, "eval-diff-parting");
    expect(text(q3.querySelector(".question"))).toBe("q3");
    expect(text(q3.querySelector(".golds"))).toBe("Gold: —");
    const [a3, b3] = allByTestId(q3, "eval-diff-side");
    expect(text(a3.querySelector(".side-head"))).toBe("A vanilla-rag ✗wrong");
    expect(text(byTestId(a3, "eval-diff-answer"))).toBe("I do not know.");
    expect(text(byTestId(b3, "eval-diff-answer"))).toBe("Paris.");
    expect([...byTestId(b3, "eval-diff-trace")!.querySelectorAll("li")].map(text)).toEqual([
      "page outline: 3 sections",
      "passages: [1] paris.md",
    ]);

    // Picking B's spec for A swaps them, and drops the diff of the earlier choice.
    select("eval-diff-a").value = "pager:variant=parallel";
    select("eval-diff-a").dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    expect([select("eval-diff-a").value, select("eval-diff-b").value]).toEqual(["pager:variant=parallel", "vanilla-rag"]);
    expect(byTestId(panel, "eval-diff-counts")).toBeNull();
    select("eval-diff-right-by").value = "em";
    select("eval-diff-right-by").dispatchEvent(new Event("change", { bubbles: true }));
    flushSync();
    currentDiff = evalDiff({ right_by: "em", compared: 3, both_right: 0, both_wrong: 2, only_b: [] });
    shell.invoke.mockImplementation(fallback);
    run.click();
    await settle();
    expect(calls("eval_diff").at(-1)).toEqual([
      "eval_diff",
      { out: "/evals/hotpot", a: "pager:variant=parallel", b: "vanilla-rag", right_by: "em" },
    ]);
    expect(text(byTestId(panel, "eval-diff-counts"))).toBe(
      "Compared 3 questions by EM · both right 0 · both wrong 2 · only pager:variant=parallel right 1 · only vanilla-rag right 0",
    );
    // An empty list says so.
    expect(allByTestId(byTestId(panel, "eval-diff-only-b")!, "eval-diff-parting")).toHaveLength(0);
    expect(text(byTestId(panel, "eval-diff-only-b")!.querySelector("p"))).toBe("none");
    expect(target.querySelector(".error-notice")).toBeNull();
  });

  it("offers no comparison for a report of one spec", async () => {
    current = report({ methods: [specSummary("vanilla-rag")] });
    const { target } = await view();
    const panel = await withReport(target);
    expect(allByTestId(panel, "eval-summary-row")).toHaveLength(1);
    expect(byTestId(target, "eval-diff")).toBeNull();
  });

  it("says why two specs could not be compared, and tries again", async () => {
    const { target } = await view();
    const panel = byTestId(await withReport(target), "eval-diff")!;
    const fallback = shell.invoke.getMockImplementation()!;
    shell.invoke.mockImplementation(async (command: string, args?: Record<string, unknown>) => {
      if (command === "eval_diff") throw { code: "eval_no_such_spec", message: "no spec vanilla-rag in /evals/hotpot", details: null };
      return fallback(command, args);
    });
    byTestId(panel, "eval-diff-run")!.click();
    await settle();
    const notice = panel.querySelector(".error-notice")!;
    expect(text(notice)).toContain("The two specs could not be compared");
    expect(text(notice)).toContain("no spec vanilla-rag in /evals/hotpot");
    expect(byTestId(panel, "eval-diff-counts")).toBeNull();

    shell.invoke.mockImplementation(fallback);
    [...notice.querySelectorAll("button")].find((b) => text(b) === "Try again")!.click();
    await settle();
    expect(calls("eval_diff")).toHaveLength(2);
    expect(panel.querySelector(".error-notice")).toBeNull();
    expect(text(byTestId(panel, "eval-diff-counts"))).toMatch(/^Compared 3 questions/);
  });

  it("keeps the questions, answers, errors and trace lines of a comparison inert", async () => {
    const img = "<img src=x onerror=alert(1)>";
    const [parting] = currentDiff.only_a;
    parting.question = HOSTILE;
    parting.golds = [HOSTILE];
    parting.a.answer = `${img} is the answer`;
    parting.a.key_parts = [HOSTILE];
    parting.b.error = HOSTILE;
    currentDiff.only_b[0].b.answer = HOSTILE;
    const { target } = await view();
    const panel = byTestId(await withReport(target), "eval-diff")!;
    byTestId(panel, "eval-diff-run")!.click();
    await settle();
    const [item] = allByTestId(byTestId(panel, "eval-diff-only-a")!, "eval-diff-parting");
    const answer = byTestId(item, "eval-diff-answer")!;
    expect(answer.textContent).toBe(`${img} is the answer`);
    expect(answer.children).toHaveLength(0);
    for (const id of ["eval-diff-only-a", "eval-diff-only-b"]) {
      const list = byTestId(panel, id)!;
      expectInert(list);
      expectVisible(list);
    }
    expectVisible(item.querySelector(".question")!);
    expectVisible(byTestId(item, "eval-diff-trace")!);
    expectVisible(byTestId(item, "eval-diff-error")!);
  });
});
