// What the person has typed into Ask (and Compare) and the conversation
// Ask shows: kept outside the views so switching views, or re-running or
// continuing from History, keeps it.
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { MethodOption } from "$lib/bindings/MethodOption";
import type { RunRecord } from "$lib/bindings/RunRecord";
import type { Scope } from "$lib/bindings/Scope";
import { AskRun } from "./ask.svelte";
import { ScopeChoice } from "./scope-choice.svelte";

/** `null`: the method's own (its paper's k or temperature), else the configured value. */
export type Knobs = { k: number | null; temperature: number | null; maxTokens: number | null };

export function defaultKnobs(): Knobs {
  return { k: null, temperature: null, maxTokens: null };
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
 * The request for one method, within `scope`. Options equal to their
 * defaults are left out, so the stored run records only what the person
 * actually changed.
 */
export function buildRequest(
  question: string,
  method: string,
  knobs: Knobs,
  declared: MethodOption[],
  values: Record<string, string>,
  scope: Scope,
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
    scope,
  };
}

class AskForm {
  question = $state("");
  method = $state("");
  knobs = $state(defaultKnobs());
  /** Option values by method id, then option name. */
  options = $state<Record<string, Record<string, string>>>({});
  /** What the next question draws from; it stays set, turn after turn and thread after thread, until changed. */
  readonly scope = new ScopeChoice();
  /** The conversation's turns, oldest first. */
  turns = $state<AskRun[]>([]);

  /** The newest turn. */
  get current(): AskRun | null {
    return this.turns.at(-1) ?? null;
  }

  /** The conversation's thread once the engine has named it; null while there is none yet. */
  get threadId(): number | null {
    return this.current?.threadId ?? null;
  }
}

export const askForm = new AskForm();

/** Asks the next turn: a follow-up in the conversation's thread, or the first turn of a new one. */
export function askNext(request: AskRequest): AskRun {
  const thread = askForm.threadId;
  const run = new AskRun(thread === null ? request : { ...request, thread });
  askForm.turns.push(run);
  void run.start();
  return run;
}

/** Starts a new thread with this request (History's re-run) and makes it the Ask view's conversation. */
export function startAsk(request: AskRequest): AskRun {
  newThread();
  return askNext(request);
}

/** The method that answers about one whole document, within a scope of exactly that document. */
export const WHOLE_DOCUMENT_METHOD = "whole-document";

/**
 * Readies Ask for a question about one whole document (Library's "Ask
 * about this document"): a new thread, the whole-document method, and a
 * scope of exactly that document.
 */
export function askAboutDocument(path: string): void {
  newThread();
  askForm.method = WHOLE_DOCUMENT_METHOD;
  askForm.scope.set({ paths: [path], collections: [], formats: [], since: null, tags: [] });
}

/** Ends the conversation: the next question starts a new thread. */
export function newThread(): void {
  askForm.turns = [];
}

/**
 * Makes a stored thread, turns oldest first, the conversation the next
 * question follows up, within the scope its last turn was asked in.
 */
export function continueThread(turns: RunRecord[]): void {
  askForm.turns = turns.map((record) => AskRun.stored(record));
  const last = askForm.turns.at(-1);
  if (last) askForm.scope.set(last.request.scope);
}
