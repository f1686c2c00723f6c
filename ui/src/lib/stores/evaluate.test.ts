// The Evaluate store against a fake shell: what the form sends, how the
// streamed events become progress, and how a question's runs are read.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { EvalEvent } from "$lib/bindings/EvalEvent";
import type { EvalForm } from "$lib/bindings/EvalForm";
import { COMMON_DEFAULTS } from "$lib/testing/methods";

const core = vi.hoisted(() => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  return { invoke: vi.fn(), Channel };
});
vi.mock("@tauri-apps/api/core", () => core);

const store = await import("./evaluate.svelte");
const {
  EvaluateStore,
  buildEvalForm,
  defaultEvalForm,
  filterQuestions,
  logText,
  parseTags,
  specsOf,
  storedEvalForm,
  validateEvalForm,
} = store;
const { app } = await import("./app.svelte");
const { toasts } = await import("./toasts.svelte");
const { noScoring, questions, report, row, storedRuns } = await import("../../views/evaluate/testing");

const calls = (command: string) => core.invoke.mock.calls.filter(([c]) => c === command);

function filled() {
  return {
    ...defaultEvalForm(),
    dataset: " /data/dev.jsonl ",
    corpus: "/data/corpus.jsonl",
    out: "/evals/dev",
    methods: ["vanilla-rag", "llm-only"],
  };
}

beforeEach(() => {
  core.invoke.mockReset();
  localStorage.clear();
  toasts.splice(0);
  app.methods = [
    { id: "llm-only", name: "LLM only", summary: "", retrieves: false, defaults: COMMON_DEFAULTS, options: [] },
    { id: "vanilla-rag", name: "Vanilla RAG", summary: "", retrieves: true, defaults: COMMON_DEFAULTS, options: [] },
    { id: "pager", name: "PAGER", summary: "", retrieves: true, defaults: COMMON_DEFAULTS, options: [] },
  ];
});

describe("the form", () => {
  it("sends the checked methods in the app's order, then the extra specs, each once", () => {
    const form = { ...filled(), extraSpecs: " pager:variant=parallel, vanilla-rag ,, pager:variant=parallel:k=3" };
    expect(specsOf(form, app.methods.map((m) => m.id))).toEqual([
      "llm-only",
      "vanilla-rag",
      "pager:variant=parallel",
      "pager:variant=parallel:k=3",
    ]);
  });

  it("leaves empty numbers out so the engine's defaults apply", () => {
    const specs = ["vanilla-rag"];
    expect(buildEvalForm(filled(), specs)).toEqual<EvalForm>({
      dataset: "/data/dev.jsonl",
      corpus: "/data/corpus.jsonl",
      out: "/evals/dev",
      methods: specs,
      fresh: false,
      judge: false,
      tags: [],
    });
    const all = { ...filled(), limit: 20, k: 8, temperature: 0, maxTokens: 256, seed: 0, concurrency: 4, judge: true };
    expect(buildEvalForm(all, specs)).toMatchObject({
      limit: 20,
      k: 8,
      temperature: 0,
      max_tokens: 256,
      seed: 0,
      concurrency: 4,
      judge: true,
    });
  });

  it("reads the typed tags: commas or spaces between, a leading # dropped, each once", () => {
    expect(parseTags("")).toEqual([]);
    expect(parseTags(" ,, ")).toEqual([]);
    expect(parseTags("#garden/fruit, recipes  #recipes,garden/fruit\tarea #")).toEqual(["garden/fruit", "recipes", "area"]);
    expect(buildEvalForm({ ...filled(), tags: "#garden/fruit recipes" }, ["vanilla-rag"]).tags).toEqual([
      "garden/fruit",
      "recipes",
    ]);
  });

  it("names every missing path and the missing methods", () => {
    expect(validateEvalForm(defaultEvalForm(), [])).toEqual({
      dataset: expect.stringMatching(/^Choose the dataset/),
      corpus: expect.stringMatching(/^Choose the corpus/),
      out: expect.stringMatching(/^Choose a folder/),
      methods: "Choose at least one method, or type a spec.",
    });
    expect(validateEvalForm(filled(), ["vanilla-rag"])).toEqual({});
  });

  it("refuses a malformed spec and numbers out of range", () => {
    const form = {
      ...filled(),
      extraSpecs: "pager:variant=parallel, pager:parallel",
      limit: 0,
      k: 2.5,
      temperature: 3,
      maxTokens: 0,
      seed: -1,
      concurrency: 0,
    };
    expect(Object.keys(validateEvalForm(form, ["x"])).sort()).toEqual(
      ["concurrency", "extraSpecs", "k", "limit", "maxTokens", "seed", "temperature"].sort(),
    );
    expect(validateEvalForm(form, ["x"]).extraSpecs).toMatch(/^“pager:parallel” is not a spec/);
  });

  it("reads the remembered form defensively", () => {
    localStorage.setItem("folio.evalForm", "{not json");
    expect(storedEvalForm()).toEqual(defaultEvalForm());
    localStorage.setItem(
      "folio.evalForm",
      JSON.stringify({ dataset: "/d.jsonl", methods: ["pager", 3], k: "5", limit: 10, judge: true, fresh: true }),
    );
    // Saved before tags were asked for: none.
    expect(storedEvalForm()).toEqual({ ...defaultEvalForm(), dataset: "/d.jsonl", methods: ["pager"], limit: 10, judge: true });
    localStorage.setItem("folio.evalForm", JSON.stringify({ tags: "recipes, #area" }));
    expect(storedEvalForm()).toEqual({ ...defaultEvalForm(), tags: "recipes, #area" });
    localStorage.setItem("folio.evalForm", JSON.stringify({ tags: ["recipes"] }));
    expect(storedEvalForm().tags).toBe("");
  });
});

describe("the running log", () => {
  it("says which spec answered which question, and how", () => {
    const line = { done: 3, total: 20, spec: "vanilla-rag", questionId: "q12", status: "done" as const, coverEm: true };
    expect(logText(line)).toBe("[3/20] vanilla-rag q12 · covered");
    expect(logText({ ...line, coverEm: false })).toBe("[3/20] vanilla-rag q12 · not covered");
    expect(logText({ ...line, status: "failed" })).toBe("[3/20] vanilla-rag q12 · failed");
  });

  it("follows the stages, each with its own progress, and keeps the last answers", () => {
    const s = new EvaluateStore();
    const answered = (done: number, status: "done" | "failed" = "done"): EvalEvent => ({
      kind: "answered",
      done,
      total: 20,
      row: row(`q${done}`, "vanilla-rag", null, { status, cover_em: done % 2 === 0 }),
    });
    s.apply({ kind: "notice", text: "reusing 4 answers from an earlier run" });
    s.apply({ kind: "stage", stage: "indexing" });
    expect([s.stage, s.progress]).toEqual(["indexing", null]);
    s.apply({
      kind: "indexing",
      progress: { job_id: 1, kind: "ingest", phase: "embedding", done: 30, total: 40, failed: 0, rate: null, eta_seconds: null },
    });
    expect([s.phase, s.progress]).toEqual(["embedding", { done: 30, total: 40 }]);
    s.apply({ kind: "stage", stage: "preparing" });
    expect([s.phase, s.progress]).toEqual([null, null]);
    s.apply({ kind: "graph_scoring", progress: { ...noScoring, done: 5, total: 12 } });
    expect(s.progress).toEqual({ done: 5, total: 12 });
    s.apply({ kind: "stage", stage: "answering" });
    for (let done = 1; done <= 10; done++) s.apply(answered(done, done === 9 ? "failed" : "done"));
    expect(s.progress).toEqual({ done: 10, total: 20 });
    expect(s.log.map(logText)).toEqual([
      "[3/20] vanilla-rag q3 · not covered",
      "[4/20] vanilla-rag q4 · covered",
      "[5/20] vanilla-rag q5 · not covered",
      "[6/20] vanilla-rag q6 · covered",
      "[7/20] vanilla-rag q7 · not covered",
      "[8/20] vanilla-rag q8 · covered",
      "[9/20] vanilla-rag q9 · failed",
      "[10/20] vanilla-rag q10 · covered",
    ]);
    expect(s.failedAnswers).toBe(1);
    s.apply({ kind: "stage", stage: "judging" });
    s.apply({ kind: "judged", done: 2, total: 20 });
    expect([s.stage, s.progress]).toEqual(["judging", { done: 2, total: 20 }]);
    s.apply({ kind: "later", what: 1 } as unknown as EvalEvent);
    expect(s.notices).toEqual(["reusing 4 answers from an earlier run"]);
  });
});

describe("EvaluateStore", () => {
  it("sends nothing while the form is incomplete", async () => {
    const s = new EvaluateStore();
    await s.start();
    expect(core.invoke).not.toHaveBeenCalled();
    expect(Object.keys(s.formErrors)).toEqual(["dataset", "corpus", "out", "methods"]);
    expect(s.running).toBe(false);
  });

  it("streams an evaluation to its report, remembers the form, and unticks Start over", async () => {
    let finish: (value: unknown) => void = () => {};
    core.invoke.mockImplementation((command: string, args: { on_event: { onmessage: (e: EvalEvent) => void } }) => {
      expect(command).toBe("start_eval");
      args.on_event.onmessage({ kind: "stage", stage: "indexing" });
      return new Promise((resolve) => (finish = resolve));
    });
    const s = new EvaluateStore();
    Object.assign(s.form, { ...filled(), fresh: true, k: 3, tags: "recipes #area" });
    const done = s.start();
    expect(s.running).toBe(true);
    expect(s.stage).toBe("indexing");
    expect(calls("start_eval")[0][1].form).toEqual({
      dataset: "/data/dev.jsonl",
      corpus: "/data/corpus.jsonl",
      out: "/evals/dev",
      methods: ["llm-only", "vanilla-rag"],
      fresh: true,
      judge: false,
      tags: ["recipes", "area"],
      k: 3,
    });
    const saved = JSON.parse(localStorage.getItem("folio.evalForm")!);
    expect(saved).toMatchObject({ dataset: " /data/dev.jsonl ", methods: ["vanilla-rag", "llm-only"], k: 3, tags: "recipes #area" });
    expect("fresh" in saved).toBe(false);
    finish(report());
    await done;
    expect(s.running).toBe(false);
    expect(s.report?.out).toBe("/evals/hotpot");
    expect(s.form.fresh).toBe(false);
    expect(storedEvalForm()).toMatchObject({ dataset: " /data/dev.jsonl ", k: 3, fresh: false });
  });

  it("keeps the error of an evaluation that stopped, and Start over when it did", async () => {
    core.invoke.mockRejectedValue({ code: "eval_mismatch", message: "the folder holds another evaluation", details: null });
    const s = new EvaluateStore();
    Object.assign(s.form, { ...filled(), fresh: true });
    await s.start();
    expect(s.runError).toEqual({ code: "eval_mismatch", message: "the folder holds another evaluation", details: null });
    expect(s.running).toBe(false);
    expect(s.form.fresh).toBe(true);
  });

  it("cancels once", async () => {
    core.invoke.mockImplementation((command: string) => (command === "start_eval" ? new Promise(() => {}) : Promise.resolve()));
    const s = new EvaluateStore();
    Object.assign(s.form, filled());
    void s.start();
    await s.cancel();
    await s.cancel();
    expect(calls("cancel_eval")).toEqual([["cancel_eval", undefined]]);
    expect(s.cancelling).toBe(true);
  });

  it("fills a path from the dialog, and keeps it when the dialog is cancelled", async () => {
    const s = new EvaluateStore();
    s.formErrors = { corpus: "Choose the corpus" };
    core.invoke.mockResolvedValue("/data/corpus");
    await s.browse("corpus", "corpus_folder");
    expect(core.invoke).toHaveBeenLastCalledWith("pick_eval_path", { pick: "corpus_folder" });
    expect(s.form.corpus).toBe("/data/corpus");
    expect(s.formErrors).toEqual({});
    core.invoke.mockResolvedValue(null);
    await s.browse("corpus", "corpus_file");
    expect(s.form.corpus).toBe("/data/corpus");
  });

  it("opens the report of a folder picked in the dialog", async () => {
    core.invoke.mockImplementation(async (command: string, args: { out?: string }) => {
      if (command === "pick_eval_path") return "/evals/hotpot";
      if (args.out === "/evals/hotpot") return report();
      throw { code: "not_an_evaluation", message: "no eval.json", details: null };
    });
    const s = new EvaluateStore();
    await s.openReport();
    expect(calls("pick_eval_path")).toEqual([["pick_eval_path", { pick: "out" }]]);
    expect(calls("eval_report")).toEqual([["eval_report", { out: "/evals/hotpot" }]]);
    expect(s.report?.questions).toHaveLength(3);
    await s.load("/tmp");
    expect(s.openError?.code).toBe("not_an_evaluation");
    expect(s.report?.out).toBe("/evals/hotpot");
  });

  it("reads a question's stored runs, not for a question without any, and drops a slow earlier answer", async () => {
    const answers: ((runs: unknown) => void)[] = [];
    core.invoke.mockImplementation(() => new Promise((resolve) => answers.push(resolve)));
    const s = new EvaluateStore();
    s.report = report();
    s.report.questions[2].rows.forEach((r) => (r.run_id = null));
    await s.selectQuestion("q3");
    const first = s.selectQuestion("q1");
    const second = s.selectQuestion("q2");
    expect(calls("eval_runs")).toEqual([
      ["eval_runs", { out: "/evals/hotpot", question_id: "q1" }],
      ["eval_runs", { out: "/evals/hotpot", question_id: "q2" }],
    ]);
    expect(s.runsLoading).toBe(true);
    const [q1, q2] = s.report.questions;
    answers[1](storedRuns(q2));
    await second;
    answers[0](storedRuns(q1));
    await first;
    expect(s.selectedQuestion?.id).toBe("q2");
    expect(s.runs.map((r) => [r.spec, r.run.id])).toEqual([["vanilla-rag", 13]]);
    expect(s.runsLoading).toBe(false);
    await s.selectQuestion(null);
    expect([s.selected, s.runs]).toEqual([null, []]);
  });

  it("exports the report and says where", async () => {
    core.invoke.mockResolvedValue("/home/me/eval.md");
    const s = new EvaluateStore();
    s.report = report();
    await s.exportReport();
    expect(core.invoke).toHaveBeenCalledWith("export_eval_report", { out: "/evals/hotpot" });
    expect(toasts.map((t) => t.message)).toEqual(["Exported to /home/me/eval.md"]);
  });
});

describe("filterQuestions", () => {
  it("finds where the specs disagree and where none covered", () => {
    const all = questions();
    expect(filterQuestions(all, "all").map((q) => q.id)).toEqual(["q1", "q2", "q3"]);
    expect(filterQuestions(all, "disagree").map((q) => q.id)).toEqual(["q2"]);
    expect(filterQuestions(all, "uncovered").map((q) => q.id)).toEqual(["q3"]);
    expect(filterQuestions([{ id: "q9", question: null, golds: [], rows: [] }], "uncovered")).toEqual([]);
  });
});
