// The Compare view's question, chosen methods and their runs side by side.
import type { AskRequest } from "$lib/bindings/AskRequest";
import { AskRun } from "./ask.svelte";
import { defaultKnobs } from "./ask-form.svelte";

export const MIN_COMPARED = 2;
export const MAX_COMPARED = 4;

export const compare = $state({
  question: "",
  methods: [] as string[],
  knobs: defaultKnobs(),
  runs: [] as AskRun[],
});

export function toggleCompared(method: string, on: boolean): void {
  const without = compare.methods.filter((m) => m !== method);
  compare.methods = on && without.length < MAX_COMPARED ? [...without, method] : without;
}

/** Starts every request at once; each run streams through its own channel. */
export function startCompare(requests: AskRequest[]): void {
  compare.runs = requests.map((request) => new AskRun(request));
  for (const run of compare.runs) void run.start();
}
