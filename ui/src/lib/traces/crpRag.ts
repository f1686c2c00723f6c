// What CRP-RAG's trace says about a step, in words and marks shared by the
// graph, the step's details and the paths below them.
import type { CrpRagVariant } from "$lib/bindings/CrpRagVariant";
import type { GraphStop } from "$lib/bindings/GraphStop";
import type { ReasoningNode } from "$lib/bindings/ReasoningNode";
import type { SufficiencyCheck } from "$lib/bindings/SufficiencyCheck";
import type { ThresholdSource } from "$lib/bindings/ThresholdSource";

/** What a box's colour says: the question, or a step by its sufficiency check. */
export type StepStatus = "question" | "sufficient" | "insufficient" | "unchecked";

export function stepStatus(node: Pick<ReasoningNode, "id" | "check">): StepStatus {
  if (node.id === 0) return "question";
  if (!node.check) return "unchecked";
  return node.check.sufficient ? "sufficient" : "insufficient";
}

export function stepName(id: number): string {
  return id === 0 ? "Question" : `Step ${id}`;
}

/** "0 → 2 → 4". */
export function pathLabel(nodes: readonly number[]): string {
  return nodes.join(" → ");
}

/** Where the check's threshold came from, after the threshold itself. */
export function thresholdOrigin(source: ThresholdSource): string {
  const percent = (share: number) => `${Math.round(100 * share)}%`;
  switch (source.kind) {
    case "calibrated":
      return ` (calibrated for this model: ${percent(source.accuracy)} of the probes sorted right, ${percent(source.held_out_accuracy)} held out)`;
    case "uncalibrated":
      return " (this model is not calibrated; SmolLM2-135M's value)";
    case "given":
      return " (as asked)";
    case "not_used":
      return "";
  }
}

export function perplexityText(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : String(value);
}

/** A check in a few characters, for a box's corner: "✓ 1.87", "✗ no". */
export function checkMark(check: SufficiencyCheck | null): string {
  if (!check) return "";
  const mark = check.sufficient ? "✓" : "✗";
  if (check.test === "perplexity" && check.perplexity != null) return `${mark} ${perplexityText(check.perplexity)}`;
  return `${mark} ${check.sufficient ? "yes" : "no"}`;
}

/** A check in words: "sufficient (perplexity 1.87)", "insufficient (self-assessed)". */
export function checkWords(check: SufficiencyCheck | null): string {
  if (!check) return "not checked";
  const verdict = check.sufficient ? "sufficient" : "insufficient";
  if (check.test === "perplexity" && check.perplexity != null) return `${verdict} (perplexity ${perplexityText(check.perplexity)})`;
  return `${verdict} (self-assessed)`;
}

export const VARIANTS: Record<CrpRagVariant, string> = {
  "crp-rag": "crp-rag (the full method: each step's knowledge summarised and checked, each path reasoned along step by step)",
  "no-aggregation": "no-aggregation (each step's retrieved passages are its knowledge, not a summary of them)",
  "no-evaluation": "no-evaluation (no sufficiency check: the shortest and the longest path are reasoned along)",
  "no-iterative": "no-iterative (each path is answered in one call from all its steps at once)",
};

export function stopText(stop: GraphStop, budget: { depth: number; nodes: number }): string {
  switch (stop) {
    case "all-final":
      return "every open step led to a final one";
    case "no-new-steps":
      return "the open steps' replies held no usable step";
    case "depth-budget":
      return `reached the depth budget (${budget.depth} round${budget.depth === 1 ? "" : "s"})`;
    case "node-budget":
      return `reached the node budget (${budget.nodes} step${budget.nodes === 1 ? "" : "s"})`;
    default:
      return String(stop);
  }
}
