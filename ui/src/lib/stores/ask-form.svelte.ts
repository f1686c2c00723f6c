// What the person has typed into Ask (and Compare): kept outside the views
// so switching views, or re-running from History, keeps it.
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { MethodOption } from "$lib/bindings/MethodOption";
import { AskRun } from "./ask.svelte";

export type Knobs = { k: number; temperature: number | null; maxTokens: number | null };

export function defaultKnobs(): Knobs {
  return { k: 5, temperature: null, maxTokens: null };
}

/** An option's default as the string the engine would parse back. */
export function optionDefault(option: MethodOption): string {
  const value = option.default;
  if (value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/**
 * The request for one method. Options equal to their defaults are left out,
 * so the stored run records only what the person actually changed.
 */
export function buildRequest(
  question: string,
  method: string,
  knobs: Knobs,
  declared: MethodOption[],
  values: Record<string, string>,
): AskRequest {
  const options: Record<string, string> = {};
  for (const option of declared) {
    const value = values[option.name]?.trim();
    if (value !== undefined && value !== "" && value !== optionDefault(option)) options[option.name] = value;
  }
  return {
    question: question.trim(),
    method,
    k: knobs.k,
    temperature: knobs.temperature,
    max_tokens: knobs.maxTokens,
    options,
  };
}

export const askForm = $state({
  question: "",
  method: "",
  knobs: defaultKnobs(),
  /** Option values by method id, then option name. */
  options: {} as Record<string, Record<string, string>>,
  current: null as AskRun | null,
});

/** Starts answering with the given request and makes it the Ask view's run. */
export function startAsk(request: AskRequest): AskRun {
  const run = new AskRun(request);
  askForm.current = run;
  void run.start();
  return run;
}
