// The information-gain graph's vocabulary as the app words it: the rubrics
// a graph is scored with and the classes its edges fall into. The graph
// panel in Library and iG²RAG's trace both use it, so they read alike.
import type { GainClass } from "$lib/bindings/GainClass";
import type { Rubric } from "$lib/bindings/Rubric";

/** The kind of the graph's jobs in the jobs list. */
export const GRAPH_JOB = "gain-graph";

/** Neighbours scored per chunk: the paper's top-n, and the most one prompt takes. */
export const DEFAULT_NEIGHBOURS = 5;
export const MAX_NEIGHBOURS = 20;

export const RUBRICS: readonly { id: Rubric; summary: string }[] = [
  { id: "coarse", summary: "four classes, redundant to novel (the paper's default)" },
  { id: "fine", summary: "a score from 0.00 to 1.00 for each neighbour" },
  { id: "binary", summary: "gain or no gain" },
];

export function rubricSummary(rubric: Rubric): string {
  return RUBRICS.find((r) => r.id === rubric)?.summary ?? "";
}

/** In the order the engine counts them (RubricStatus.edges_by_class). */
export const GAIN_CLASSES: readonly { id: GainClass; meaning: string }[] = [
  { id: "redundant", meaning: "repeats what the chunk says" },
  { id: "minor", meaning: "adds a little" },
  { id: "significant", meaning: "adds a good deal" },
  { id: "novel", meaning: "mostly new information" },
];
