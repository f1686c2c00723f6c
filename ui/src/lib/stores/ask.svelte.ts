// One question being answered: the RunEvents streamed by the shell folded
// into reactive state, then the stored RunRecord once the command resolves.
// Ask uses one of these, every Compare column uses its own.
import { api, toIpcError } from "$lib/api";
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { IpcError } from "$lib/bindings/IpcError";
import type { Rewrite } from "$lib/bindings/Rewrite";
import type { RunEvent } from "$lib/bindings/RunEvent";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { Trace } from "$lib/bindings/Trace";
import { runRequest, runTotalMs, type RunStatus } from "$lib/runs";
import { showToast } from "./toasts.svelte";

export type LlmStep = {
  kind: "llm";
  step: string;
  text: string;
  finished: boolean;
  promptTokens: number;
  completionTokens: number;
  wallMs: number;
};

export type RetrievalStep = { kind: "retrieval"; query: string; passages: number };

export type RunProgress = {
  runId: number | null;
  /** The thread the run belongs to, once the engine has started it. */
  threadId: number | null;
  method: string | null;
  status: RunStatus | "starting";
  /** Retrievals and model calls in the order they happened. */
  timeline: (LlmStep | RetrievalStep)[];
  /** The method's trace so far; each event carries all of it, so the latest wins. */
  trace: Trace | null;
  /** How a follow-up was read before retrieval; null for a first turn, or until told. */
  rewrite: Rewrite | null;
};

export function emptyProgress(): RunProgress {
  return { runId: null, threadId: null, method: null, status: "starting", timeline: [], trace: null, rewrite: null };
}

export function llmSteps(progress: RunProgress): LlmStep[] {
  return progress.timeline.filter((s): s is LlmStep => s.kind === "llm");
}

function newLlmStep(progress: RunProgress, step: string): LlmStep {
  progress.timeline.push({ kind: "llm", step, text: "", finished: false, promptTokens: 0, completionTokens: 0, wallMs: 0 });
  // Return the stored (possibly proxied) entry so later writes are tracked.
  return progress.timeline[progress.timeline.length - 1] as LlmStep;
}

function openStep(progress: RunProgress, step: string): LlmStep {
  for (let i = progress.timeline.length - 1; i >= 0; i--) {
    const s = progress.timeline[i];
    if (s.kind === "llm" && s.step === step && !s.finished) return s;
  }
  // Tokens without a preceding llm_started still belong somewhere visible.
  return newLlmStep(progress, step);
}

/** Applies one event. Event types this UI does not know yet are ignored. */
export function foldRunEvent(progress: RunProgress, event: RunEvent): void {
  switch (event.type) {
    case "started":
      progress.runId = event.run_id;
      progress.threadId = event.thread_id;
      progress.method = event.method;
      progress.status = "running";
      break;
    case "rewritten":
      progress.rewrite = event.rewrite;
      break;
    case "retrieved":
      progress.timeline.push({ kind: "retrieval", query: event.query, passages: event.passages });
      break;
    case "llm_started":
      newLlmStep(progress, event.step);
      break;
    case "token":
      openStep(progress, event.step).text += event.text;
      break;
    case "llm_finished": {
      const step = openStep(progress, event.step);
      step.finished = true;
      step.promptTokens = event.prompt_tokens;
      step.completionTokens = event.completion_tokens;
      step.wallMs = event.wall_ms;
      break;
    }
    case "trace":
      progress.trace = event.trace;
      break;
    case "finished":
      progress.runId = event.run_id;
      progress.status = event.status;
      break;
  }
}

export class AskRun {
  readonly askId: string;
  readonly request: AskRequest;
  progress = $state<RunProgress>(emptyProgress());
  record = $state<RunRecord | null>(null);
  error = $state<IpcError | null>(null);
  cancelling = $state(false);
  private startedAt = Date.now();
  private finishedAt = $state<number | null>(null);

  constructor(request: AskRequest) {
    this.askId = crypto.randomUUID();
    this.request = request;
  }

  /** A run that is already stored, as History hands a thread back to Ask. */
  static stored(record: RunRecord): AskRun {
    const run = new AskRun(runRequest(record));
    run.record = record;
    run.startedAt = record.created_at;
    run.finishedAt = record.finished_at ?? record.created_at;
    return run;
  }

  get status(): RunStatus | "starting" {
    if (this.record) return this.record.status;
    if (this.error) return this.error.code === "cancelled" ? "cancelled" : "failed";
    return this.progress.status;
  }

  /**
   * The thread this run answers in: the stored one, the started one, or
   * the one it follows up (a fork gets a new thread, known once started).
   */
  get threadId(): number | null {
    return this.record?.thread_id ?? this.progress.threadId ?? (this.request.fork ? null : this.request.thread) ?? null;
  }

  /** How the follow-up was read before retrieval, once known; null for a first turn. */
  get rewrite(): Rewrite | null {
    return this.record?.turn?.rewrite ?? this.progress.rewrite;
  }

  get running(): boolean {
    return this.finishedAt === null;
  }

  /** The text streaming right now: the latest model call's tokens. */
  get liveText(): string {
    const steps = llmSteps(this.progress);
    return steps.length ? steps[steps.length - 1].text : "";
  }

  get llmCalls(): number {
    return this.record?.llm_calls ?? llmSteps(this.progress).length;
  }

  get tokens(): { prompt: number; completion: number } {
    if (this.record) return { prompt: this.record.prompt_tokens, completion: this.record.completion_tokens };
    let prompt = 0;
    let completion = 0;
    for (const s of llmSteps(this.progress)) {
      prompt += s.promptTokens;
      completion += s.completionTokens;
    }
    return { prompt, completion };
  }

  /** Engine-measured wall time once stored, otherwise time since the click. */
  wallMs(now = Date.now()): number {
    return runTotalMs(this.record) ?? (this.finishedAt ?? now) - this.startedAt;
  }

  async start(): Promise<void> {
    try {
      this.record = await api.ask(this.request, this.askId, (events) => {
        for (const event of events) foldRunEvent(this.progress, event);
      });
    } catch (error) {
      this.error = toIpcError(error);
    } finally {
      this.finishedAt = Date.now();
    }
  }

  async cancel(): Promise<void> {
    if (!this.running || this.cancelling) return;
    this.cancelling = true;
    try {
      await api.cancelAsk(this.askId);
    } catch (error) {
      this.cancelling = false;
      showToast(`Could not cancel: ${toIpcError(error).message}`, "error");
    }
  }
}
