// The Compare view's question, chosen methods and their runs side by side,
// and the thread it follows up, if any.
import type { AskRequest } from "$lib/bindings/AskRequest";
import type { Scope } from "$lib/bindings/Scope";
import { AskRun } from "./ask.svelte";
import { defaultKnobs } from "./ask-form.svelte";
import { ScopeChoice } from "./scope-choice.svelte";

export const MIN_COMPARED = 2;
export const MAX_COMPARED = 4;

export const compare = $state({
  question: "",
  methods: [] as string[],
  knobs: defaultKnobs(),
  /** What every method draws from. */
  scope: new ScopeChoice(),
  runs: [] as AskRun[],
  /** The thread every method follows up, each in a branch of its own; null for a fresh question. */
  threadId: null as number | null,
  /** That thread's title (its first question). */
  threadTitle: "",
});

export function toggleCompared(method: string, on: boolean): void {
  const without = compare.methods.filter((m) => m !== method);
  compare.methods = on && without.length < MAX_COMPARED ? [...without, method] : without;
}

/**
 * Makes the next comparison a follow-up of this thread, starting from the
 * question typed so far, within the scope the conversation was asked in.
 */
export function followUpInCompare(threadId: number, title: string, question: string, scope: Scope): void {
  compare.threadId = threadId;
  compare.threadTitle = title;
  compare.question = question;
  compare.scope.set(scope);
}

export function clearCompareThread(): void {
  compare.threadId = null;
  compare.threadTitle = "";
}

/**
 * Starts every request at once; each run streams through its own channel.
 * Following up a thread, each run branches from it, so every method
 * answers with the same history.
 */
export function startCompare(requests: AskRequest[]): void {
  const thread = compare.threadId;
  compare.runs = requests.map(
    (request) => new AskRun(thread === null ? request : { ...request, thread, fork: true }),
  );
  for (const run of compare.runs) void run.start();
}
