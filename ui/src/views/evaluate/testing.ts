// For the Evaluate tests: a report as the shell returns it, typed by the
// generated bindings so a change on the Rust side fails `npm run check`
// here, the stored runs behind its rows, and a diff of its two specs.
import type { BuildProgress } from "$lib/bindings/BuildProgress";
import type { EvalDiff } from "$lib/bindings/EvalDiff";
import type { EvalQuestion } from "$lib/bindings/EvalQuestion";
import type { EvalReport } from "$lib/bindings/EvalReport";
import type { EvalRow } from "$lib/bindings/EvalRow";
import type { EvalRun } from "$lib/bindings/EvalRun";
import type { EvalSide } from "$lib/bindings/EvalSide";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { SpecSummary } from "$lib/bindings/SpecSummary";

export const SPECS = ["vanilla-rag", "pager:variant=parallel"] as const;

export function specSummary(spec: string, extra: Partial<SpecSummary> = {}): SpecSummary {
  return {
    spec,
    n: 3,
    cover_em_percent: 66.66666,
    em_percent: 33.33333,
    f1_percent: 51.2,
    failures: 0,
    cut_offs: 0,
    refused_percent: 0,
    evidence_hit_percent: 100,
    recall_percent: null,
    judge_percent: null,
    llm_calls: { mean: 1, min: 1, max: 1 },
    prompt_tokens_mean: 812.4,
    completion_tokens_mean: 31.6,
    wall_ms_p50: 1240,
    wall_ms_p95: 2980,
    ...extra,
  };
}

/** A graph pass that has scored nothing yet. */
export const noScoring: BuildProgress = {
  done: 0,
  total: 0,
  failed: 0,
  edges: 0,
  calls: 0,
  prompt_tokens: 0,
  cached_tokens: 0,
  completion_tokens: 0,
  rate: null,
  eta_seconds: null,
  stopped: false,
};

export function row(questionId: string, spec: string, runId: number | null, extra: Partial<EvalRow> = {}): EvalRow {
  return {
    question_id: questionId,
    spec,
    status: "done",
    answer: `Answer of ${spec} to ${questionId}`,
    error: null,
    llm_calls: 1,
    prompt_tokens: 800,
    cached_tokens: 0,
    completion_tokens: 30,
    wall_ms: 1200,
    run_id: runId,
    sources: ["/corpus/doc-1.md"],
    cited: ["/corpus/doc-1.md"],
    attributed: [],
    evidence_hit: true,
    refused: false,
    cut_off: false,
    em: false,
    f1: 0.5,
    cover_em: true,
    ...extra,
  };
}

/**
 * Three questions over two specs: q1 both covered, q2 only the first
 * (the second's request failed before a run was stored), q3 neither.
 */
export function questions(): EvalQuestion[] {
  const [a, b] = SPECS;
  return [
    {
      id: "q1",
      question: "Who wrote Middlemarch?",
      golds: ["George Eliot", "Mary Ann Evans"],
      rows: [row("q1", a, 11, { em: true, f1: 1 }), row("q1", b, 12)],
    },
    {
      id: "q2",
      question: "Where is the Mauritshuis?",
      golds: ["The Hague"],
      rows: [
        row("q2", a, 13),
        row("q2", b, null, {
          status: "failed",
          answer: null,
          error: "the model server did not answer",
          cover_em: false,
          f1: 0,
          llm_calls: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
        }),
      ],
    },
    {
      id: "q3",
      question: null,
      golds: [],
      rows: [row("q3", a, 15, { cover_em: false, f1: 0 }), row("q3", b, 16, { cover_em: false, f1: 0.2 })],
    },
  ];
}

export function report(extra: Partial<EvalReport["summary"]> = {}): EvalReport {
  return {
    out: "/evals/hotpot",
    summary: {
      dataset: "/data/hotpot-dev.jsonl",
      corpus: "/data/hotpot-corpus.jsonl",
      questions: 3,
      model: { backend: "openai", model: "qwen2.5:7b-instruct", context_size: 8192 },
      judge: null,
      corpus_files: null,
      ingest: {
        indexed: 40,
        unchanged: 0,
        failed: 0,
        removed: 0,
        set_aside: 0,
        chunks_embedded: 120,
        chunks_reused: 0,
        cancelled: false,
      },
      interrupted: false,
      graphs: [],
      methods: SPECS.map((s, i) =>
        specSummary(s, { cover_em_percent: 66.7 - 33.3 * i, prompt_tokens_mean: 800 + 2400 * i }),
      ),
      k: 5,
      temperature: 0.2,
      configured_temperature: 0.2,
      max_tokens: 512,
      seed: 7,
      ...extra,
    },
    questions: questions(),
  };
}

export function runRecord(id: number, method: string): RunRecord {
  return {
    id,
    thread_id: id,
    turn: null,
    question: "Who wrote Middlemarch?",
    method,
    scope: { paths: [], collections: [], formats: [], since: null, tags: [] },
    params: {},
    model: {},
    status: "done",
    answer: `Run ${id}: **George Eliot** wrote it.`,
    citations: [],
    trace: null,
    error: null,
    timings: { total_ms: 1200 },
    llm_calls: 1,
    prompt_tokens: 800,
    cached_tokens: 0,
    completion_tokens: 30,
    created_at: 0,
    finished_at: 1,
  };
}

/** What the shell returns for `question`'s runs: one per row with a stored run. */
export function storedRuns(question: EvalQuestion, make: typeof runRecord = runRecord): EvalRun[] {
  return question.rows.flatMap((r) =>
    r.run_id === null ? [] : [{ spec: r.spec, run: make(r.run_id, r.spec.split(":")[0]) }],
  );
}

export function side(extra: Partial<EvalSide> = {}): EvalSide {
  return {
    status: "done",
    answer: "An answer",
    error: null,
    key_parts: [],
    ...extra,
  };
}

/**
 * What the shell returns comparing the report's two specs: q1 both right,
 * q2 only the first (the second's request failed), q3 only the second
 * (its question no longer readable).
 */
export function evalDiff(extra: Partial<EvalDiff> = {}): EvalDiff {
  const [a, b] = SPECS;
  return {
    a: `/evals/hotpot#${a}`,
    b: `/evals/hotpot#${b}`,
    right_by: "cover-em",
    compared: 3,
    both_right: 1,
    both_wrong: 0,
    only_a: [
      {
        question_id: "q2",
        question: "Where is the Mauritshuis?",
        golds: ["The Hague"],
        a: side({
          answer: "It is in The Hague.",
          key_parts: ["searched: hybrid, 5 passages", "passages: [1] mauritshuis.md"],
        }),
        b: side({ status: "failed", answer: null, error: "the model server did not answer" }),
      },
    ],
    only_b: [
      {
        question_id: "q3",
        question: null,
        golds: [],
        a: side({ answer: "I do not know.", key_parts: ["answered from the model's own knowledge"] }),
        b: side({ answer: "Paris.", key_parts: ["page outline: 3 sections", "passages: [1] paris.md"] }),
      },
    ],
    ...extra,
  };
}
