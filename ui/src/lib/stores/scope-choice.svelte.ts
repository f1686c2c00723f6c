// The scope a composer (Ask, Compare) asks within, and whether the engine
// can use it: each change is checked with `scope_size` once the person
// pauses, so an unusable scope (nothing indexed there, a collection since
// deleted) stops the question before it is asked, with the engine's reason.
import { api, toIpcError } from "$lib/api";
import type { IpcError } from "$lib/bindings/IpcError";
import type { Scope } from "$lib/bindings/Scope";
import { isWholeLibrary, wholeLibrary } from "$lib/scope";

export type ScopeStatus =
  | { kind: "whole" }
  | { kind: "checking" }
  | { kind: "ok"; documents: number }
  | { kind: "unusable"; error: IpcError };

export type SettledStatus = Exclude<ScopeStatus, { kind: "checking" }>;

export class ScopeChoice {
  scope = $state<Scope>(wholeLibrary());
  status = $state<ScopeStatus>({ kind: "whole" });
  /** What the last finished check found, kept while the next one runs so the picker does not flicker. */
  settled = $state<SettledStatus>({ kind: "whole" });

  private timer: ReturnType<typeof setTimeout> | null = null;
  private pending: Promise<void> | null = null;
  // Only the newest check may set the status; slower earlier ones are dropped.
  private generation = 0;

  constructor(private readonly debounceMs = 300) {}

  /** Asks within `scope` from now on, and checks it once changes pause. */
  set(scope: Scope): void {
    // A copy: a stored run's scope, say, must not change with the picker.
    this.scope = $state.snapshot(scope);
    this.check();
  }

  /** Checks the scope again (the library may have changed), after `delayMs`. */
  check(delayMs = this.debounceMs): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const generation = ++this.generation;
    if (isWholeLibrary(this.scope)) {
      this.finish({ kind: "whole" });
      return;
    }
    this.status = { kind: "checking" };
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pending = this.ask(generation);
    }, delayMs);
  }

  /**
   * The status once the newest check is done, checking now rather than
   * after the pause: what a question asked straight after a change waits for.
   */
  async settle(): Promise<ScopeStatus> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.pending = this.ask(this.generation);
    }
    await this.pending;
    return this.status;
  }

  private async ask(generation: number): Promise<void> {
    try {
      const documents = await api.scopeSize(this.snapshot());
      if (generation !== this.generation) return;
      this.finish(documents === null ? { kind: "whole" } : { kind: "ok", documents });
    } catch (error) {
      if (generation !== this.generation) return;
      this.finish({ kind: "unusable", error: toIpcError(error) });
    }
  }

  private finish(status: SettledStatus): void {
    this.status = status;
    this.settled = status;
  }

  /** The scope as a plain value, for a request that must not change when the picker does. */
  snapshot(): Scope {
    return $state.snapshot(this.scope);
  }

  /** Why nothing can be asked within the scope; null when it can (or is still being checked). */
  get blocked(): string | null {
    return this.status.kind === "unusable" ? this.status.error.message : null;
  }
}
