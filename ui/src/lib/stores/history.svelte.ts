// Past runs: a search box that queries the engine after the person stops
// typing, and the run opened from the list.
import { api, toIpcError } from "$lib/api";
import type { IpcError } from "$lib/bindings/IpcError";
import type { RunDetail } from "$lib/bindings/RunDetail";
import type { RunRecord } from "$lib/bindings/RunRecord";

export class HistoryStore {
  query = $state("");
  runs = $state<RunRecord[]>([]);
  loading = $state(false);
  error = $state<IpcError | null>(null);
  selected = $state<RunDetail | null>(null);
  detailError = $state<IpcError | null>(null);

  private timer: ReturnType<typeof setTimeout> | null = null;
  // Only the newest search may fill the list; slower earlier ones are dropped.
  private generation = 0;

  constructor(
    private readonly debounceMs = 250,
    private readonly limit = 200,
  ) {}

  search(query: string): void {
    this.query = query;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.load();
    }, this.debounceMs);
  }

  async load(): Promise<void> {
    const generation = ++this.generation;
    const query = this.query.trim();
    this.loading = true;
    try {
      const runs = await api.runs(query === "" ? null : query, this.limit);
      if (generation !== this.generation) return;
      this.runs = runs;
      this.error = null;
      // Keep the open run if it is still listed, else show the newest match.
      if (!runs.some((r) => r.id === this.selected?.run.id)) {
        if (runs.length > 0) await this.open(runs[0].id);
        else this.selected = null;
      }
    } catch (error) {
      if (generation === this.generation) this.error = toIpcError(error);
    } finally {
      if (generation === this.generation) this.loading = false;
    }
  }

  async open(id: number): Promise<void> {
    try {
      this.selected = await api.runDetail(id);
      this.detailError = null;
    } catch (error) {
      this.detailError = toIpcError(error);
    }
  }

  async remove(id: number): Promise<void> {
    await api.deleteRun(id);
    this.runs = this.runs.filter((r) => r.id !== id);
    if (this.selected?.run.id === id) this.selected = null;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export const runHistory = new HistoryStore();
