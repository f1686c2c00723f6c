// The report's "Compare two methods" state against a fake shell: which
// specs and measure reach eval_diff, that A and B always differ, and that
// only the diff of the choice on screen is shown.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { EvalDiff } from "$lib/bindings/EvalDiff";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { EvalDiffStore, RIGHT_BY, rightByLabel } = await import("./eval-diff.svelte");
const { EvaluateStore } = await import("./evaluate.svelte");
const { evalDiff, report, specSummary } = await import("../../views/evaluate/testing");

const calls = () => core.invoke.mock.calls.filter(([c]) => c === "eval_diff");

/** A report of three specs: vanilla-rag, pager:variant=parallel, llm-only. */
function threeSpecs() {
  const r = report();
  r.summary.methods.push(specSummary("llm-only"));
  return r;
}

function ready(r = threeSpecs()) {
  const s = new EvalDiffStore();
  s.reset(r);
  return s;
}

beforeEach(() => {
  core.invoke.mockReset();
});

describe("EvalDiffStore", () => {
  it("defaults to the report's first two specs by Cover-EM, and has nothing to compare with one spec", () => {
    const s = ready();
    expect(s.available).toBe(true);
    expect([s.specs, s.a, s.b, s.rightBy]).toEqual([
      ["vanilla-rag", "pager:variant=parallel", "llm-only"],
      "vanilla-rag",
      "pager:variant=parallel",
      "cover-em",
    ]);
    expect(RIGHT_BY.map((r) => r.id)).toEqual(["cover-em", "em"]);
    expect(rightByLabel("em")).toBe("EM");

    const one = report({ methods: [specSummary("llm-only")] });
    s.reset(one);
    expect([s.available, s.a, s.b]).toEqual([false, "llm-only", ""]);
    s.reset(null);
    expect([s.available, s.specs, s.a, s.b]).toEqual([false, [], "", ""]);
  });

  it("keeps a choice the next report still holds, and falls back to the first two when it does not", () => {
    const s = ready();
    s.choose("a", "llm-only");
    s.reset(threeSpecs());
    expect([s.a, s.b]).toEqual(["llm-only", "pager:variant=parallel"]);
    s.reset(report());
    expect([s.a, s.b]).toEqual(["vanilla-rag", "pager:variant=parallel"]);
  });

  it("never puts one spec on both sides: choosing the other side's spec swaps them", () => {
    const s = ready();
    s.choose("a", "pager:variant=parallel");
    expect([s.a, s.b]).toEqual(["pager:variant=parallel", "vanilla-rag"]);
    s.choose("b", "pager:variant=parallel");
    expect([s.a, s.b]).toEqual(["vanilla-rag", "pager:variant=parallel"]);
    s.choose("b", "llm-only");
    expect([s.a, s.b]).toEqual(["vanilla-rag", "llm-only"]);
    // A spec the report does not hold is not taken.
    s.choose("a", "pager");
    expect([s.a, s.b]).toEqual(["vanilla-rag", "llm-only"]);
  });

  it("sends the report's folder, the chosen specs and the measure, and shows the diff with them", async () => {
    core.invoke.mockResolvedValue(evalDiff({ right_by: "em" }));
    const s = ready();
    s.choose("a", "llm-only");
    s.setRightBy("em");
    const loading = s.load();
    expect(s.loading).toBe(true);
    await loading;
    expect(calls()).toEqual([
      ["eval_diff", { out: "/evals/hotpot", a: "llm-only", b: "pager:variant=parallel", right_by: "em" }],
    ]);
    expect(s.loading).toBe(false);
    expect(s.error).toBeNull();
    expect(s.result).toEqual({ a: "llm-only", b: "pager:variant=parallel", rightBy: "em", diff: evalDiff({ right_by: "em" }) });

    // A changed choice drops the diff of the earlier one.
    s.setRightBy("cover-em");
    expect(s.result).toBeNull();
  });

  it("asks nothing without a report of two specs", async () => {
    const s = new EvalDiffStore();
    await s.load();
    s.reset(report({ methods: [specSummary("llm-only")] }));
    await s.load();
    expect(core.invoke).not.toHaveBeenCalled();
  });

  it("drops a slow answer to an earlier choice or an earlier click", async () => {
    const answers: ((diff: EvalDiff) => void)[] = [];
    core.invoke.mockImplementation(() => new Promise((resolve) => answers.push(resolve)));
    const s = ready();
    const first = s.load();
    s.choose("b", "llm-only");
    expect(s.loading).toBe(false);
    const second = s.load();
    expect(calls().map(([, args]) => args.b)).toEqual(["pager:variant=parallel", "llm-only"]);
    const newer = evalDiff({ b: "/evals/hotpot#llm-only", compared: 2 });
    answers[1](newer);
    await second;
    answers[0](evalDiff());
    await first;
    expect(s.result).toEqual({ a: "vanilla-rag", b: "llm-only", rightBy: "cover-em", diff: newer });
    expect(s.loading).toBe(false);

    // The same choice clicked twice: the second answer stands.
    const third = s.load();
    const fourth = s.load();
    answers[3](evalDiff({ compared: 4 }));
    await fourth;
    answers[2](evalDiff({ compared: 1 }));
    await third;
    expect(s.result?.diff.compared).toBe(4);
    expect(s.loading).toBe(false);
  });

  it("keeps the shell's error, and clears it when a later diff comes", async () => {
    core.invoke.mockRejectedValue({ code: "eval_no_such_spec", message: "pager:variant=parallel is not in /evals/hotpot", details: null });
    const s = ready();
    await s.load();
    expect(s.error).toEqual({
      code: "eval_no_such_spec",
      message: "pager:variant=parallel is not in /evals/hotpot",
      details: null,
    });
    expect([s.result, s.loading]).toEqual([null, false]);
    core.invoke.mockResolvedValue(evalDiff());
    await s.load();
    expect(s.error).toBeNull();
    expect(s.result?.diff.compared).toBe(3);
  });

  it("is reset with each report the Evaluate store shows", async () => {
    core.invoke.mockImplementation(async (command: string) => (command === "eval_report" ? threeSpecs() : evalDiff()));
    const evaluation = new EvaluateStore();
    await evaluation.load("/evals/hotpot");
    expect(evaluation.diff.specs).toEqual(["vanilla-rag", "pager:variant=parallel", "llm-only"]);
    await evaluation.diff.load();
    expect(calls()).toEqual([
      ["eval_diff", { out: "/evals/hotpot", a: "vanilla-rag", b: "pager:variant=parallel", right_by: "cover-em" }],
    ]);
    expect(evaluation.diff.result).not.toBeNull();
    await evaluation.load("/evals/hotpot");
    expect(evaluation.diff.result).toBeNull();
  });
});
