// The library as the Library view shows it: the overview from the engine,
// live job progress folded from `engine` events, and overview refreshes
// throttled so a folder of thousands of files does not flood the shell.
import { api, toIpcError } from "$lib/api";
import type { EngineEvent } from "$lib/bindings/EngineEvent";
import type { IpcError } from "$lib/bindings/IpcError";
import type { LibraryOverview } from "$lib/bindings/LibraryOverview";
import type { Progress } from "$lib/bindings/Progress";
import { percent } from "$lib/render/format";

type JobProgressEvent = Extract<EngineEvent, { type: "job_progress" }>;
type Job = LibraryOverview["jobs"][number];

export type JobView = {
  id: number;
  kind: string;
  state: Job["state"];
  phase: JobProgressEvent["phase"] | null;
  done: number;
  total: number;
  failed: number;
  rate: number | null;
  etaSeconds: number | null;
  percent: number | null;
  interrupted: boolean;
  error: string | null;
};

export type Activity = {
  path: string;
  outcome: "indexed" | "failed" | "removed" | "reading";
  detail: string | null;
};

const ACTIVE: ReadonlyArray<Job["state"]> = ["queued", "running", "paused"];

export function isActive(state: Job["state"]): boolean {
  return ACTIVE.includes(state);
}

/** A job as stored, overlaid with the latest live progress while it runs. */
export function jobView(job: Job, live: JobProgressEvent | undefined): JobView {
  const current = live && isActive(job.state) ? live : null;
  const done = current?.done ?? job.done;
  const total = current?.total ?? job.total;
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    phase: current?.phase ?? null,
    done,
    total,
    failed: current?.failed ?? job.failed,
    rate: current ? current.rate : job.rate,
    etaSeconds: current ? current.eta_seconds : job.eta_seconds,
    percent: percent(done, total),
    interrupted: job.interrupted,
    error: job.error,
  };
}

export class LibraryStore {
  overview = $state<LibraryOverview | null>(null);
  error = $state<IpcError | null>(null);
  live = $state<Record<number, JobProgressEvent>>({});
  lastActivity = $state<Activity | null>(null);
  /** An older index's vectors being converted to int8, until the last batch. */
  vectorsUpgrade = $state<Progress | null>(null);
  /** A large library's approximate vector index being built, until done. */
  vectorIndexBuild = $state<Progress | null>(null);

  private lastRefresh = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight: Promise<void> | null = null;
  private staleWhileLoading = false;

  constructor(private readonly minRefreshMs = 1000) {}

  get jobs(): JobView[] {
    return (this.overview?.jobs ?? []).map((job) => jobView(job, this.live[job.id]));
  }

  async refresh(): Promise<void> {
    if (this.inFlight) {
      // The running query may have read the index before this change landed.
      this.staleWhileLoading = true;
      return this.inFlight;
    }
    this.lastRefresh = Date.now();
    this.inFlight = (async () => {
      try {
        this.overview = await api.libraryOverview();
        this.error = null;
      } catch (error) {
        this.error = toIpcError(error);
      } finally {
        this.inFlight = null;
        if (this.staleWhileLoading) {
          this.staleWhileLoading = false;
          this.scheduleRefresh();
        }
      }
    })();
    return this.inFlight;
  }

  /** Refreshes now, or once the throttle window has passed; never more often. */
  scheduleRefresh(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastRefresh + this.minRefreshMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.refresh();
    }, wait);
  }

  applyEngineEvents(events: EngineEvent[]): void {
    let changed = false;
    for (const event of events) {
      switch (event.type) {
        case "job_progress":
          this.live[event.job_id] = event;
          if (event.phase === "finished") changed = true;
          break;
        case "document_indexed":
          this.lastActivity = { path: event.path, outcome: "indexed", detail: null };
          changed = true;
          break;
        case "document_failed":
          this.lastActivity = { path: event.path, outcome: "failed", detail: event.error };
          changed = true;
          break;
        case "document_removed":
          this.lastActivity = { path: event.path, outcome: "removed", detail: null };
          changed = true;
          break;
        case "document_reading":
          // A page of a long OCR read: nothing in the overview changed yet.
          this.lastActivity = {
            path: event.path,
            outcome: "reading",
            detail: `page ${event.progress.done} of ${event.progress.total}`,
          };
          break;
        case "vectors_upgrading": {
          const finished = event.progress.done >= event.progress.total;
          this.vectorsUpgrade = finished ? null : event.progress;
          if (finished) changed = true;
          break;
        }
        case "vector_index_building": {
          const finished = event.progress.done >= event.progress.total;
          this.vectorIndexBuild = finished ? null : event.progress;
          break;
        }
        case "library_changed":
          // Another process (the CLI, another window) wrote to the library.
          changed = true;
          break;
      }
    }
    if (changed) this.scheduleRefresh();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export const library = new LibraryStore();
