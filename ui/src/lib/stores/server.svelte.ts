// Settings' server switch: the library served to other apps on this
// machine, as `folio serve` serves it (Folio's API under /api, its methods
// as OpenAI-compatible models under /v1). It acts at once, apart from the
// settings form; the shell remembers the choice and serves again when the
// app next opens the library. Kept outside the view so switching views
// keeps the address being typed.
import { api, toIpcError } from "$lib/api";
import type { IpcError } from "$lib/bindings/IpcError";
import type { ServerView } from "$lib/bindings/ServerView";

/** What was being done when the shell refused. */
export type ServerAction = "read" | "on" | "off";

export class ServerStore {
  /** The shell's last word on the server; null until it has been read. */
  view = $state<ServerView | null>(null);
  /** The address in the field: the view's until the person types another, kept when serving stops. */
  address = $state("");
  /** Which way a switch still with the shell goes; null when none is. */
  switching = $state<boolean | null>(null);
  /** Why the last read or switch was refused (a bad address, say); null once one succeeds. */
  error = $state<IpcError | null>(null);
  /** What `error` was refused. */
  failed = $state<ServerAction>("read");

  // A read that comes back after a switch began is older than the switch's answer: dropped.
  private generation = 0;

  get running(): boolean {
    return this.view?.running ?? false;
  }

  get busy(): boolean {
    return this.switching !== null;
  }

  /** Where the switch stands: the way it is going while it goes, then whether the library is to be served (even where a port in use keeps it from being served). */
  get on(): boolean {
    return this.switching ?? this.view?.on ?? false;
  }

  /** Reads whether the library is served now (Settings opening). Nothing is read during a switch. */
  async load(): Promise<void> {
    if (this.busy) return;
    const generation = ++this.generation;
    try {
      const view = await api.serverView();
      if (generation !== this.generation) return;
      this.take(view);
      this.error = null;
    } catch (error) {
      if (generation !== this.generation) return;
      // What was read before may no longer hold: the switch waits for a read that works.
      this.view = null;
      this.error = toIpcError(error);
      this.failed = "read";
    }
  }

  /**
   * Serves the library at the address typed, or stops serving it. A refusal
   * (an address that is not one, or not this machine's) is kept for display
   * and leaves the switch where it was; a port in use is the view's `error`.
   */
  async switchTo(on: boolean): Promise<void> {
    if (this.busy) return;
    ++this.generation;
    this.switching = on;
    this.error = null;
    try {
      this.take(await api.switchServer(on, this.address.trim()));
    } catch (error) {
      this.error = toIpcError(error);
      this.failed = on ? "on" : "off";
    } finally {
      this.switching = null;
    }
  }

  private take(view: ServerView): void {
    this.view = view;
    // Running, the field says where (port 0 became a real port); stopped, it
    // keeps what the person typed rather than the shell's default.
    if (view.running || this.address.trim() === "") this.address = view.address;
  }
}

export const localServer = new ServerStore();
