// The report's "Compare two methods" panel, as `folio eval diff` does it:
// two of the evaluation's specs, what counts as right, and where they part
// ways. Reset whenever another report is shown.
import { api, toIpcError } from "$lib/api";
import type { EvalDiff } from "$lib/bindings/EvalDiff";
import type { EvalReport } from "$lib/bindings/EvalReport";
import type { IpcError } from "$lib/bindings/IpcError";
import type { RightBy } from "$lib/bindings/RightBy";

/** What `folio eval diff --right-by` takes, the CLI's default first, as the summary table names them. */
export const RIGHT_BY: readonly { id: RightBy; label: string }[] = [
  { id: "cover-em", label: "Cover-EM" },
  { id: "em", label: "EM" },
];

export function rightByLabel(rightBy: RightBy): string {
  return RIGHT_BY.find((r) => r.id === rightBy)?.label ?? rightBy;
}

/** A diff with the choice it answers: the shell labels its sides `DIR#SPEC`, the panel by spec. */
export type ShownDiff = { a: string; b: string; rightBy: RightBy; diff: EvalDiff };

export class EvalDiffStore {
  /** The report's specs, in its order; fewer than two and there is nothing to compare. */
  specs = $state<string[]>([]);
  a = $state("");
  b = $state("");
  rightBy = $state<RightBy>("cover-em");
  /** The diff of the choice on screen; null until it has been loaded, and again once the choice changes. */
  result = $state<ShownDiff | null>(null);
  loading = $state(false);
  error = $state<IpcError | null>(null);

  private out: string | null = null;
  // Only a diff of the current choice may be shown; an answer to an earlier one is dropped.
  private generation = 0;

  get available(): boolean {
    return this.specs.length >= 2;
  }

  /** Takes the specs of the report now shown; a choice they still hold is kept. */
  reset(report: EvalReport | null): void {
    this.out = report?.out ?? null;
    this.specs = report?.summary.methods.map((m) => m.spec) ?? [];
    const kept = this.a !== this.b && this.specs.includes(this.a) && this.specs.includes(this.b);
    if (!kept) {
      this.a = this.specs[0] ?? "";
      this.b = this.specs[1] ?? "";
    }
    this.drop();
  }

  /** Puts `spec` on one side; picking the other side's spec swaps them, so A and B always differ. */
  choose(side: "a" | "b", spec: string): void {
    if (!this.specs.includes(spec) || this[side] === spec) return;
    const other = side === "a" ? "b" : "a";
    if (this[other] === spec) this[other] = this[side];
    this[side] = spec;
    this.drop();
  }

  setRightBy(rightBy: RightBy): void {
    if (rightBy === this.rightBy || !RIGHT_BY.some((r) => r.id === rightBy)) return;
    this.rightBy = rightBy;
    this.drop();
  }

  /** Compares the chosen specs of the report now shown. */
  async load(): Promise<void> {
    const out = this.out;
    const { a, b, rightBy } = this;
    if (out === null || a === "" || b === "" || a === b) return;
    const generation = ++this.generation;
    this.loading = true;
    this.error = null;
    try {
      const diff = await api.evalDiff(out, a, b, rightBy);
      if (generation === this.generation) this.result = { a, b, rightBy, diff };
    } catch (error) {
      if (generation === this.generation) {
        this.result = null;
        this.error = toIpcError(error);
      }
    } finally {
      if (generation === this.generation) this.loading = false;
    }
  }

  /** Forgets the diff on screen and any on its way: it was of another choice. */
  private drop(): void {
    this.generation++;
    this.result = null;
    this.error = null;
    this.loading = false;
  }
}
