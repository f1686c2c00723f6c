// Typed views of the JSON columns of a stored run. The engine stores
// citations, trace and timings as JSON, so the generated RunRecord types
// them as JsonValue; these helpers give them their generated shapes back.
import type { Citation } from "$lib/bindings/Citation";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { Trace } from "$lib/bindings/Trace";

export type RunStatus = RunRecord["status"];

export function runCitations(run: RunRecord | null | undefined): Citation[] {
  return Array.isArray(run?.citations) ? (run.citations as unknown as Citation[]) : [];
}

export function runTrace(run: RunRecord | null | undefined): Trace | null {
  const trace = run?.trace;
  return trace && typeof trace === "object" && !Array.isArray(trace) ? (trace as unknown as Trace) : null;
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
