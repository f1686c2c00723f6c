import { flushSync, mount, unmount } from "svelte";
import { describe, expect, it, vi } from "vitest";
import type { JobView } from "$lib/stores/library.svelte";

vi.mock("@tauri-apps/api/core", () => ({ invoke: vi.fn(), Channel: class {} }));

const { default: JobList } = await import("./JobList.svelte");

function view(extra: Partial<JobView>): JobView {
  return {
    id: 1,
    kind: "ingest",
    state: "running",
    phase: "embedding",
    done: 10,
    total: 40,
    failed: 0,
    rate: 2.5,
    etaSeconds: 12,
    percent: 25,
    interrupted: false,
    error: null,
    ...extra,
  };
}

const text = (el: Element | null | undefined) => el?.textContent?.replace(/\s+/g, " ").trim() ?? "";

describe("JobList", () => {
  it("names each kind of job and what its rate counts; an unknown kind shows as the engine names it", () => {
    const target = document.createElement("div");
    const jobs = [
      view({ id: 1 }),
      view({ id: 2, kind: "gain-graph", phase: "scoring", rate: 0.5 }),
      view({ id: 3, kind: "re-embed", phase: null, rate: 4 }),
      view({ id: 4, kind: "eval", phase: "answering", rate: 0.2 }),
    ];
    const instance = mount(JobList, { target, props: { jobs, paused: false } });
    flushSync();
    const rows = [...target.querySelectorAll('[data-testid="job-row"]')];
    expect(rows.map((r) => text(r.querySelector('[data-testid="job-kind"]')))).toEqual([
      "Indexing folders",
      "Information-gain graph",
      "re-embed",
      "Evaluation",
    ]);
    expect(text(rows[0])).toContain("Embedding");
    expect(text(rows[0])).toContain("2.5 docs/s");
    expect(text(rows[1])).toContain("Scoring neighbours");
    expect(text(rows[1])).toContain("0.5 chunks/s");
    expect(text(rows[2])).toContain("4.0 items/s");
    expect(text(rows[3])).toContain("Answering questions");
    expect(text(rows[3])).toContain("0.2 answers/s");
    unmount(instance);
  });
});
