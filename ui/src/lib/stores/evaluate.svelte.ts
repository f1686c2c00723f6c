// The Evaluate view's state: the form (remembered between sessions), the
// evaluation running now, the report on screen, the question opened from
// it and the two specs compared in it. One module-level instance, so
// leaving the view during a long evaluation and coming back shows where it
// has got to.
import { api, toIpcError } from "$lib/api";
import type { EvalEvent } from "$lib/bindings/EvalEvent";
import type { EvalForm } from "$lib/bindings/EvalForm";
import type { EvalPick } from "$lib/bindings/EvalPick";
import type { EvalQuestion } from "$lib/bindings/EvalQuestion";
import type { EvalReport } from "$lib/bindings/EvalReport";
import type { EvalRun } from "$lib/bindings/EvalRun";
import type { EvalStage } from "$lib/bindings/EvalStage";
import type { IpcError } from "$lib/bindings/IpcError";
import type { RunStatus } from "$lib/runs";
import { app } from "./app.svelte";
import { EvalDiffStore } from "./eval-diff.svelte";
import { showToast } from "./toasts.svelte";

const FORM_KEY = "folio.evalForm";

/** How many answered questions the running log keeps. */
export const LOG_LINES = 8;

const NUMBER_FIELDS = ["limit", "k", "temperature", "maxTokens", "seed", "concurrency"] as const;
type NumberField = (typeof NUMBER_FIELDS)[number];

/** The form as typed; an empty number field is null and means the default. */
export type EvalFormFields = {
  dataset: string;
  corpus: string;
  out: string;
  methods: string[];
  /** Comma-separated specs such as `pager:variant=parallel`, after the checked methods. */
  extraSpecs: string;
  /** The corpus's tags to retrieve within, as typed: `garden/fruit, recipes`. */
  tags: string;
  judge: boolean;
  fresh: boolean;
} & Record<NumberField, number | null>;

export type EvalField = "dataset" | "corpus" | "out" | "methods" | "extraSpecs" | NumberField;
export type EvalFormErrors = Partial<Record<EvalField, string>>;

export function defaultEvalForm(): EvalFormFields {
  return {
    dataset: "",
    corpus: "",
    out: "",
    methods: [],
    extraSpecs: "",
    tags: "",
    judge: false,
    fresh: false,
    limit: null,
    k: null,
    temperature: null,
    maxTokens: null,
    seed: null,
    concurrency: null,
  };
}

/**
 * The form last started, read defensively: it was written by an earlier
 * version, or edited by hand. "Start over" is never remembered, so a later
 * session cannot replace a folder's answers by surprise.
 */
export function storedEvalForm(): EvalFormFields {
  const form = defaultEvalForm();
  let saved: unknown;
  try {
    saved = JSON.parse(localStorage.getItem(FORM_KEY) ?? "null");
  } catch {
    return form;
  }
  if (!saved || typeof saved !== "object" || Array.isArray(saved)) return form;
  const s = saved as Record<string, unknown>;
  for (const key of ["dataset", "corpus", "out", "extraSpecs", "tags"] as const) {
    const value = s[key];
    if (typeof value === "string") form[key] = value;
  }
  for (const key of NUMBER_FIELDS) {
    const value = s[key];
    if (typeof value === "number" && Number.isFinite(value)) form[key] = value;
  }
  if (Array.isArray(s.methods)) form.methods = s.methods.filter((m): m is string => typeof m === "string");
  if (typeof s.judge === "boolean") form.judge = s.judge;
  return form;
}

function saveEvalForm(form: EvalFormFields): void {
  localStorage.setItem(FORM_KEY, JSON.stringify({ ...form, fresh: undefined }));
}

function extraSpecs(text: string): string[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/** The typed tags, each once: commas or spaces separate them, and a leading `#` is dropped. */
export function parseTags(text: string): string[] {
  const tags = text.split(/[\s,]+/).map((t) => t.replace(/^#/, ""));
  return [...new Set(tags.filter((t) => t !== ""))];
}

/** The checked methods in the order the app lists them, then the extra specs, each once. */
export function specsOf(form: EvalFormFields, known: string[]): string[] {
  const checked = known.filter((id) => form.methods.includes(id));
  return [...new Set([...checked, ...extraSpecs(form.extraSpecs)])];
}

/** `method` or `method:name=value:name=value`, as `folio eval --methods` parses a spec. */
function wellFormedSpec(spec: string): boolean {
  const [method, ...options] = spec.split(":");
  return (
    /^[^\s=]+$/.test(method.trim()) &&
    options.every((option) => {
      const at = option.indexOf("=");
      return at > 0 && option.slice(0, at).trim() !== "" && option.slice(at + 1).trim() !== "";
    })
  );
}

function wholeNumber(value: number | null, min: number, max = Number.MAX_SAFE_INTEGER): boolean {
  return value === null || (Number.isInteger(value) && value >= min && value <= max);
}

export function validateEvalForm(form: EvalFormFields, specs: string[]): EvalFormErrors {
  const errors: EvalFormErrors = {};
  if (form.dataset.trim() === "") errors.dataset = "Choose the dataset: a JSON-lines file of questions and gold answers.";
  if (form.corpus.trim() === "") errors.corpus = "Choose the corpus: a JSON-lines file, or a folder of documents.";
  if (form.out.trim() === "") errors.out = "Choose a folder for the answers and the report.";
  const malformed = extraSpecs(form.extraSpecs).find((s) => !wellFormedSpec(s));
  if (malformed !== undefined) {
    errors.extraSpecs = `“${malformed}” is not a spec: write method or method:option=value, separated by commas.`;
  } else if (specs.length === 0) {
    errors.methods = "Choose at least one method, or type a spec.";
  }
  if (!wholeNumber(form.limit, 1)) errors.limit = "A whole number of at least 1, or empty for every question.";
  if (!wholeNumber(form.k, 1)) errors.k = "A whole number of at least 1, or empty for each method's own.";
  const t = form.temperature;
  if (t !== null && !(Number.isFinite(t) && t >= 0 && t <= 2)) {
    errors.temperature = "A number from 0 to 2, or empty for each method's own (else the configured one).";
  }
  if (!wholeNumber(form.maxTokens, 1)) errors.maxTokens = "A whole number of at least 1, or empty for the configured one.";
  if (!wholeNumber(form.seed, 0, 4_294_967_295)) errors.seed = "A whole number from 0 to 4294967295, or empty.";
  if (!wholeNumber(form.concurrency, 1)) errors.concurrency = "A whole number of at least 1, or empty for one at a time.";
  return errors;
}

/** What start_eval takes: paths trimmed, and empty numbers left out so the engine's defaults apply. */
export function buildEvalForm(form: EvalFormFields, specs: string[]): EvalForm {
  const request: EvalForm = {
    dataset: form.dataset.trim(),
    corpus: form.corpus.trim(),
    out: form.out.trim(),
    methods: specs,
    fresh: form.fresh,
    judge: form.judge,
    tags: parseTags(form.tags),
  };
  if (form.limit !== null) request.limit = form.limit;
  if (form.k !== null) request.k = form.k;
  if (form.temperature !== null) request.temperature = form.temperature;
  if (form.maxTokens !== null) request.max_tokens = form.maxTokens;
  if (form.seed !== null) request.seed = form.seed;
  if (form.concurrency !== null) request.concurrency = form.concurrency;
  return request;
}

export type LogLine = {
  done: number;
  total: number;
  spec: string;
  questionId: string;
  status: RunStatus;
  coverEm: boolean;
};

export function logText(line: LogLine): string {
  const outcome = line.status === "done" ? (line.coverEm ? "covered" : "not covered") : line.status;
  return `[${line.done}/${line.total}] ${line.spec} ${line.questionId} · ${outcome}`;
}

export type QuestionFilter = "all" | "disagree" | "uncovered";

/** Questions some specs covered and others did not, or that none covered. */
export function filterQuestions(questions: EvalQuestion[], filter: QuestionFilter): EvalQuestion[] {
  if (filter === "all") return questions;
  return questions.filter((q) => {
    const covered = q.rows.filter((r) => r.cover_em).length;
    return filter === "disagree" ? covered > 0 && covered < q.rows.length : q.rows.length > 0 && covered === 0;
  });
}

export class EvaluateStore {
  form = $state<EvalFormFields>(storedEvalForm());
  formErrors = $state<EvalFormErrors>({});

  running = $state(false);
  cancelling = $state(false);
  /** Null until the engine names its first stage. */
  stage = $state<EvalStage | null>(null);
  /** The indexing job's phase (scanning, embedding…) while indexing. */
  phase = $state<string | null>(null);
  progress = $state<{ done: number; total: number } | null>(null);
  notices = $state<string[]>([]);
  log = $state<LogLine[]>([]);
  failedAnswers = $state(0);
  runError = $state<IpcError | null>(null);

  report = $state<EvalReport | null>(null);
  openError = $state<IpcError | null>(null);
  opening = $state(false);
  exporting = $state(false);

  filter = $state<QuestionFilter>("all");
  selected = $state<string | null>(null);
  runs = $state<EvalRun[]>([]);
  runsLoading = $state(false);
  runsError = $state<IpcError | null>(null);

  /** The report's "Compare two methods" panel. */
  readonly diff = new EvalDiffStore();

  // Only the newest selection may fill the runs; a slow earlier one is dropped.
  private generation = 0;

  get selectedQuestion(): EvalQuestion | null {
    return this.report?.questions.find((q) => q.id === this.selected) ?? null;
  }

  /** Applies one streamed event. Kinds this UI does not know yet are ignored. */
  apply(event: EvalEvent): void {
    switch (event.kind) {
      case "notice":
        this.notices.push(event.text);
        break;
      case "stage":
        this.stage = event.stage;
        this.phase = null;
        this.progress = null;
        break;
      case "indexing":
        this.phase = event.progress.phase;
        this.progress = { done: event.progress.done, total: event.progress.total };
        break;
      case "graph_scoring":
        this.progress = { done: event.progress.done, total: event.progress.total };
        break;
      case "judged":
        this.progress = { done: event.done, total: event.total };
        break;
      case "answered": {
        this.progress = { done: event.done, total: event.total };
        if (event.row.status === "failed") this.failedAnswers++;
        const line: LogLine = {
          done: event.done,
          total: event.total,
          spec: event.row.spec,
          questionId: event.row.question_id,
          status: event.row.status,
          coverEm: event.row.cover_em,
        };
        this.log = [...this.log.slice(1 - LOG_LINES), line];
        break;
      }
    }
  }

  async start(): Promise<void> {
    if (this.running) return;
    const specs = specsOf(this.form, app.methods.map((m) => m.id));
    this.formErrors = validateEvalForm(this.form, specs);
    if (Object.keys(this.formErrors).length > 0) return;
    const request = buildEvalForm(this.form, specs);
    saveEvalForm(this.form);
    this.running = true;
    this.stage = null;
    this.phase = null;
    this.progress = null;
    this.notices = [];
    this.log = [];
    this.failedAnswers = 0;
    this.runError = null;
    this.openError = null;
    this.showReport(null);
    try {
      this.showReport(await api.startEval(request, (event) => this.apply(event)));
      // The folder now holds this evaluation's answers: running again should resume them.
      this.form.fresh = false;
    } catch (error) {
      this.runError = toIpcError(error);
    } finally {
      this.running = false;
      this.cancelling = false;
    }
  }

  async cancel(): Promise<void> {
    if (!this.running || this.cancelling) return;
    this.cancelling = true;
    try {
      await api.cancelEval();
    } catch (error) {
      this.cancelling = false;
      showToast(`Could not cancel: ${toIpcError(error).message}`, "error");
    }
  }

  /** Fills a path field from the shell's file or folder dialog. */
  async browse(field: "dataset" | "corpus" | "out", pick: EvalPick): Promise<void> {
    try {
      const path = await api.pickEvalPath(pick);
      if (path === null) return;
      this.form[field] = path;
      delete this.formErrors[field];
    } catch (error) {
      showToast(`Could not open the dialog: ${toIpcError(error).message}`, "error");
    }
  }

  /** Asks for an evaluation's folder and shows its report. */
  async openReport(): Promise<void> {
    let out: string | null;
    try {
      out = await api.pickEvalPath("out");
    } catch (error) {
      showToast(`Could not open the dialog: ${toIpcError(error).message}`, "error");
      return;
    }
    if (out !== null) await this.load(out);
  }

  async load(out: string): Promise<void> {
    this.opening = true;
    try {
      this.showReport(await api.evalReport(out));
      this.openError = null;
      this.runError = null;
    } catch (error) {
      this.openError = toIpcError(error);
    } finally {
      this.opening = false;
    }
  }

  private showReport(report: EvalReport | null): void {
    this.report = report;
    this.diff.reset(report);
    this.filter = "all";
    this.generation++;
    this.selected = null;
    this.runs = [];
    this.runsError = null;
    this.runsLoading = false;
  }

  /** Opens a question's stored runs side by side; null closes them. */
  async selectQuestion(id: string | null): Promise<void> {
    const generation = ++this.generation;
    this.selected = id;
    this.runs = [];
    this.runsError = null;
    this.runsLoading = false;
    const report = this.report;
    const question = this.selectedQuestion;
    if (!report || !question) return;
    if (question.rows.every((r) => r.run_id === null)) return;
    this.runsLoading = true;
    try {
      const runs = await api.evalRuns(report.out, question.id);
      if (generation === this.generation) this.runs = runs;
    } catch (error) {
      if (generation === this.generation) this.runsError = toIpcError(error);
    } finally {
      if (generation === this.generation) this.runsLoading = false;
    }
  }

  async exportReport(): Promise<void> {
    if (!this.report || this.exporting) return;
    this.exporting = true;
    try {
      const path = await api.exportEvalReport(this.report.out);
      if (path) showToast(`Exported to ${path}`);
    } catch (error) {
      showToast(`Export failed: ${toIpcError(error).message}`, "error");
    } finally {
      this.exporting = false;
    }
  }
}

export const evaluation = new EvaluateStore();
