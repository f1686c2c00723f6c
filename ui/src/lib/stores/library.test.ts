import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EngineEvent } from "$lib/bindings/EngineEvent";
import type { LibraryOverview } from "$lib/bindings/LibraryOverview";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { LibraryStore, jobView } = await import("./library.svelte");

type Job = LibraryOverview["jobs"][number];

function job(extra: Partial<Job> = {}): Job {
  return {
    id: 1,
    kind: "ingest",
    state: "running",
    interrupted: false,
    payload: { roots: ["/notes"] },
    done: 10,
    total: 100,
    failed: 0,
    active_ms: 1000,
    rate: 10,
    eta_seconds: 9,
    error: null,
    owner_pid: 42,
    created_at: 0,
    updated_at: 0,
    ...extra,
  };
}

function overview(jobs: Job[]): LibraryOverview {
  return {
    data_dir: "/data",
    folders: [{ id: 1, path: "/notes", documents: 10, errors: 0, missing: false }],
    counts: { documents: 10, errors: 0, nodes: 50, chunks: 30, embedded: 30 },
    errors: [],
    jobs,
    jobs_paused: false,
    watching: true,
  };
}

const progress = (extra: object = {}): EngineEvent => ({
  type: "job_progress",
  job_id: 1,
  kind: "ingest",
  phase: "embedding",
  done: 60,
  total: 120,
  failed: 2,
  rate: 25.5,
  eta_seconds: 2.4,
  ...extra,
}) as EngineEvent;

describe("jobView", () => {
  it("uses the stored numbers when there is no live progress", () => {
    expect(jobView(job(), undefined)).toMatchObject({ done: 10, total: 100, percent: 10, rate: 10, etaSeconds: 9, phase: null });
  });

  it("overlays live progress on a running job", () => {
    const live = progress() as Extract<EngineEvent, { type: "job_progress" }>;
    expect(jobView(job(), live)).toMatchObject({
      done: 60,
      total: 120,
      failed: 2,
      percent: 50,
      rate: 25.5,
      etaSeconds: 2.4,
      phase: "embedding",
    });
  });

  it("ignores stale live progress once the job has ended", () => {
    const live = progress() as Extract<EngineEvent, { type: "job_progress" }>;
    expect(jobView(job({ state: "done", done: 120, total: 120 }), live)).toMatchObject({ done: 120, percent: 100, phase: null });
  });

  it("has no percentage while the total is unknown", () => {
    expect(jobView(job({ done: 0, total: 0 }), undefined).percent).toBeNull();
  });
});

describe("LibraryStore", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    core.invoke.mockReset();
    core.invoke.mockResolvedValue(overview([job()]));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("folds job progress events into the job list without refetching", async () => {
    const store = new LibraryStore();
    await store.refresh();
    expect(core.invoke).toHaveBeenCalledTimes(1);
    store.applyEngineEvents([progress({ done: 30 }), progress({ done: 45 })]);
    expect(store.jobs[0]).toMatchObject({ done: 45, percent: 37.5 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(core.invoke).toHaveBeenCalledTimes(1);
  });

  it("refreshes the overview on document events at most once a second", async () => {
    const store = new LibraryStore(1000);
    await store.refresh();
    core.invoke.mockClear();
    const indexed = (n: number): EngineEvent => ({ type: "document_indexed", path: `/notes/${n}.md`, chunks: 3 });
    store.applyEngineEvents([indexed(1)]);
    store.applyEngineEvents([indexed(2)]);
    await vi.advanceTimersByTimeAsync(500);
    store.applyEngineEvents([indexed(3)]);
    expect(core.invoke).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(600);
    expect(core.invoke).toHaveBeenCalledTimes(1);
    expect(core.invoke).toHaveBeenCalledWith("library_overview", undefined);
    expect(store.lastActivity).toEqual({ path: "/notes/3.md", outcome: "indexed", detail: null });
    store.applyEngineEvents([{ type: "document_failed", path: "/notes/bad.pdf", error: "corrupt PDF" }]);
    // The last refresh was 100 ms ago, so the next may come 900 ms from now.
    await vi.advanceTimersByTimeAsync(899);
    expect(core.invoke).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(2);
    expect(core.invoke).toHaveBeenCalledTimes(2);
    expect(store.lastActivity?.detail).toBe("corrupt PDF");
  });

  it("shows a file's OCR pages as they are read, without refreshing the overview", async () => {
    const store = new LibraryStore(1000);
    await store.refresh();
    core.invoke.mockClear();
    const page = (done: number): EngineEvent => ({
      type: "document_reading",
      path: "/scans/book.pdf",
      progress: { done, total: 120, failed: 0, rate: null, eta_seconds: null },
    });
    store.applyEngineEvents([page(1), page(2)]);
    expect(store.lastActivity).toEqual({ path: "/scans/book.pdf", outcome: "reading", detail: "page 2 of 120" });
    await vi.advanceTimersByTimeAsync(5000);
    expect(core.invoke).not.toHaveBeenCalled();
  });

  it("shows an older index's vector conversion until its last batch, then refreshes", async () => {
    const store = new LibraryStore(1000);
    await store.refresh();
    core.invoke.mockClear();
    const batch = (done: number): EngineEvent => ({
      type: "vectors_upgrading",
      progress: { done, total: 6000, failed: 0, rate: 2000, eta_seconds: 1 },
    });
    store.applyEngineEvents([batch(2000), batch(4000)]);
    expect(store.vectorsUpgrade).toMatchObject({ done: 4000, total: 6000 });
    await vi.advanceTimersByTimeAsync(5000);
    expect(core.invoke).not.toHaveBeenCalled();
    store.applyEngineEvents([batch(6000)]);
    expect(store.vectorsUpgrade).toBeNull();
    await vi.advanceTimersByTimeAsync(1000);
    expect(core.invoke).toHaveBeenCalledTimes(1);
  });

  it("shows the approximate index's build until its last batch", async () => {
    const store = new LibraryStore(1000);
    await store.refresh();
    const step = (done: number): EngineEvent => ({
      type: "vector_index_building",
      progress: { done, total: 300000, failed: 0, rate: 5000, eta_seconds: 40 },
      reason: "there is none yet",
    });
    store.applyEngineEvents([step(0), step(100000)]);
    expect(store.vectorIndexBuild).toMatchObject({ done: 100000, total: 300000 });
    store.applyEngineEvents([step(300000)]);
    expect(store.vectorIndexBuild).toBeNull();
  });

  it("refreshes when a job finishes", async () => {
    const store = new LibraryStore(1000);
    await store.refresh();
    core.invoke.mockClear();
    store.applyEngineEvents([progress({ phase: "finished", done: 120 })]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(core.invoke).toHaveBeenCalledTimes(1);
  });

  it("refreshes when another process changed the library", async () => {
    const store = new LibraryStore(1000);
    await store.refresh();
    core.invoke.mockClear();
    store.applyEngineEvents([{ type: "library_changed" }]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(core.invoke).toHaveBeenCalledTimes(1);
  });

  it("keeps the error when the overview cannot be read", async () => {
    core.invoke.mockRejectedValue({ code: "store", message: "database is locked", details: null });
    const store = new LibraryStore();
    await store.refresh();
    expect(store.error?.message).toBe("database is locked");
    expect(store.overview).toBeNull();
  });
});
