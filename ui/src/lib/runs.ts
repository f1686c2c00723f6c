// Typed views of the JSON columns of a stored run. The engine stores
// citations, trace and timings as JSON, so the generated RunRecord types
// them as JsonValue; these helpers give them their generated shapes back.
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { Citation } from "$lib/bindings/Citation";
import type { CitedBy } from "$lib/bindings/CitedBy";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { Trace } from "$lib/bindings/Trace";
import { wholeLibrary } from "$lib/scope";

export type RunStatus = RunRecord["status"];

export function runCitations(run: RunRecord | null | undefined): Citation[] {
  return Array.isArray(run?.citations) ? (run.citations as unknown as Citation[]) : [];
}

/** Who named a source: runs stored before attribution name only the model's. */
export function citedBy(citation: Citation): CitedBy {
  return citation.by ?? "model";
}

/** The passages the run names as sources, by number, with who named each. */
export function namedPassages(run: RunRecord | null | undefined): ReadonlyMap<number, CitedBy> {
  return new Map(runCitations(run).map((c) => [c.number, citedBy(c)]));
}

export function runTrace(run: RunRecord | null | undefined): Trace | null {
  const trace = run?.trace;
  return trace && typeof trace === "object" && !Array.isArray(trace) ? (trace as unknown as Trace) : null;
}

/**
 * The request a stored run answered, as far as its resolved parameters
 * tell: options come back with their defaults filled in, and the thread is
 * the record's own (`thread_id`), not part of the request.
 */
export function runRequest(run: RunRecord): AskRequest {
  const params = run.params && typeof run.params === "object" && !Array.isArray(run.params) ? run.params : {};
  const number = (value: unknown) => (typeof value === "number" ? value : null);
  const options: Record<string, string> = {};
  const stored = params.options;
  if (stored && typeof stored === "object" && !Array.isArray(stored)) {
    for (const [name, value] of Object.entries(stored)) {
      options[name] = typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  return {
    question: run.question,
    method: run.method,
    k: number(params.k) ?? 0,
    temperature: number(params.temperature),
    max_tokens: number(params.max_tokens),
    options,
    // Runs stored before scopes were recorded drew from the whole library.
    scope: run.scope ?? wholeLibrary(),
  };
}

/** The run's total wall time as the engine measured it, when recorded. */
export function runTotalMs(run: RunRecord | null | undefined): number | null {
  const timings = run?.timings;
  if (!timings || typeof timings !== "object" || Array.isArray(timings)) return null;
  const total = timings.total_ms;
  return typeof total === "number" ? total : null;
}

export function isFinished(status: RunStatus | "starting"): boolean {
  return status !== "running" && status !== "starting";
}
