// Past conversations: a search box that queries the engine after the
// person stops typing, and the thread opened from the list.
import { api, toIpcError } from "$lib/api";
import type { IpcError } from "$lib/bindings/IpcError";
import type { ThreadDetail } from "$lib/bindings/ThreadDetail";
import type { ThreadSummary } from "$lib/bindings/ThreadSummary";

export class HistoryStore {
  query = $state("");
  threads = $state<ThreadSummary[]>([]);
  loading = $state(false);
  error = $state<IpcError | null>(null);
  selected = $state<ThreadDetail | null>(null);
  detailError = $state<IpcError | null>(null);

  private timer: ReturnType<typeof setTimeout> | null = null;
  // Only the newest search may fill the list, and only the thread opened
  // last may fill the detail; slower earlier answers are dropped.
  private generation = 0;
  private opening = 0;

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
      const threads = await api.threads(query === "" ? null : query, this.limit);
      if (generation !== this.generation) return;
      this.threads = threads;
      this.error = null;
      // Keep the open thread if it is still listed, else show the most recent match.
      if (!threads.some((t) => t.id === this.selected?.summary.id)) {
        if (threads.length > 0) await this.open(threads[0].id);
        else this.selected = null;
      }
    } catch (error) {
      if (generation === this.generation) this.error = toIpcError(error);
    } finally {
      if (generation === this.generation) this.loading = false;
    }
  }

  async open(id: number): Promise<void> {
    const opening = ++this.opening;
    try {
      const detail = await api.threadDetail(id);
      if (opening !== this.opening) return;
      this.selected = detail;
      this.detailError = null;
    } catch (error) {
      if (opening === this.opening) this.detailError = toIpcError(error);
    }
  }

  async remove(id: number): Promise<void> {
    await api.deleteThread(id);
    this.threads = this.threads.filter((t) => t.id !== id);
    if (this.selected?.summary.id === id) this.selected = null;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export const threadHistory = new HistoryStore();
