// The graph panel against a fake shell: what it shows of each rubric's
// graph, how it queues a build, and how it follows graph jobs' progress.
import { flushSync, mount, tick, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EngineEvent } from "$lib/bindings/EngineEvent";
import type { GraphStatus } from "$lib/bindings/GraphStatus";
import type { RubricStatus } from "$lib/bindings/RubricStatus";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: GraphPanel } = await import("./GraphPanel.svelte");
const { library } = await import("$lib/stores/library.svelte");
const { toasts } = await import("$lib/stores/toasts.svelte");
const { expectInert, expectVisible, HOSTILE } = await import("$lib/testing/hostile");

type Job = GraphStatus["jobs"][number];

function rubric(extra: Partial<RubricStatus> = {}): RubricStatus {
  return {
    rubric: "coarse",
    scored: 300,
    failed: 4,
    pending: 96,
    edges: 1500,
    edges_by_class: [210, 640, 480, 170],
    models: ["SmolLM2-135M-Instruct.Q4_1.gguf"],
    cost: { nodes: 304, calls: 310, prompt_tokens: 182400, cached_tokens: 45600, completion_tokens: 9120 },
    recent_failures: [
      [41, "\"huge\" is not redundant, minor, significant or novel"],
      [77, "the reply named P6, which is not a neighbour"],
    ],
    ...extra,
  };
}

function job(extra: Partial<Job> = {}): Job {
  return {
    id: 12,
    kind: "gain-graph",
    state: "running",
    interrupted: false,
    payload: { rubric: "coarse", n: 5 },
    done: 200,
    total: 296,
    failed: 4,
    active_ms: 60_000,
    rate: 3.3,
    eta_seconds: 29,
    error: null,
    owner_pid: 1,
    created_at: 0,
    updated_at: 0,
    ...extra,
  };
}

let status: GraphStatus;
let statusCalls = 0;

beforeEach(() => {
  status = { chunks: 400, rubrics: [rubric()], jobs: [job()] };
  statusCalls = 0;
  toasts.splice(0);
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string) => {
    switch (command) {
      case "graph_status":
        statusCalls++;
        return structuredClone(status);
      case "build_graph":
        return 13;
      case "library_overview":
        return null;
      default:
        throw { code: "internal", message: `unexpected command ${command}`, details: null };
    }
  });
});

const mounted: (() => void)[] = [];

afterEach(() => {
  for (const destroy of mounted.splice(0)) destroy();
  vi.useRealTimers();
  library.live = {};
});

async function settle() {
  for (let i = 0; i < 4; i++) {
    await Promise.resolve();
    await tick();
  }
  flushSync();
}

/** Mounted in the document: a form outside it never submits. */
async function panel(props: Record<string, unknown> = {}) {
  const target = document.body.appendChild(document.createElement("div"));
  const instance = mount(GraphPanel, { target, props });
  let mountedNow = true;
  const destroy = () => {
    if (!mountedNow) return;
    mountedNow = false;
    unmount(instance);
    target.remove();
  };
  mounted.push(destroy);
  await settle();
  return { target, destroy };
}

const text = (el: Element | null | undefined) => el?.textContent?.replace(/\s+/g, " ").trim() ?? "";
const byTestId = (root: Element, id: string) => root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command);

function progress(extra: Partial<Extract<EngineEvent, { type: "job_progress" }>> = {}): EngineEvent {
  return {
    type: "job_progress",
    job_id: 12,
    kind: "gain-graph",
    phase: "scoring",
    done: 201,
    total: 296,
    failed: 4,
    rate: null,
    eta_seconds: 28,
    ...extra,
  };
}

describe("GraphPanel", () => {
  it("shows each rubric's coverage, edges per class, cost and models", async () => {
    const { target, destroy } = await panel();
    const block = byTestId(target, "graph-rubric")!;
    expect(block.dataset).toMatchObject({ rubric: "coarse", scored: "300", pending: "96", jobState: "running" });
    expect(text(block.querySelector("h3"))).toBe("coarse");
    expect(text(byTestId(block, "graph-coverage"))).toBe("300 of 400 chunks scored, 4 failed, 96 pending, 1,500 edges");
    const bar = block.querySelector("progress")!;
    expect([bar.max, bar.value]).toEqual([400, 304]);
    expect([...block.querySelectorAll(".classes li")].map(text)).toEqual([
      "redundant 210",
      "minor 640",
      "significant 480",
      "novel 170",
    ]);
    // (182,400 + 9,120) / 304 nodes; 45,600 of 182,400 prompt tokens cached.
    expect(text(block.querySelector(".cost"))).toBe(
      "630 tokens per node (prompt + completion) over 310 model calls; 25% of the prompt tokens came from the model's cache.",
    );
    expect(text(block.querySelector(".models"))).toBe("Scored by SmolLM2-135M-Instruct.Q4_1.gguf");
    expect(text(byTestId(block, "graph-job-state"))).toBe("running");
    expect(text(target.querySelector(".graph-header"))).toContain("400 chunks with a vector");
    destroy();
  });

  it("keeps recent failures collapsed, with the chunk and the reason, as text", async () => {
    status.rubrics = [rubric({ recent_failures: [[41, "bad grade"], [9, HOSTILE]] })];
    const { target, destroy } = await panel();
    const failures = byTestId(target, "graph-failures") as HTMLDetailsElement;
    expect(failures.open).toBe(false);
    expect(text(failures.querySelector("summary"))).toBe("Recent failures (the latest 2 of 4)");
    const [first, second] = failures.querySelectorAll("li");
    expect(text(first)).toBe("chunk 41 bad grade");
    expect(text(second)).toMatch(/^chunk 9 /);
    expectVisible(second);
    failures.open = true;
    expectInert(failures);
    destroy();
  });

  it("builds the coarse graph with five neighbours by default, then refreshes", async () => {
    const { target, destroy } = await panel();
    const select = byTestId(target, "graph-rubric-select") as HTMLSelectElement;
    const n = byTestId(target, "graph-neighbours") as HTMLInputElement;
    expect(select.value).toBe("coarse");
    expect([...select.options].map((o) => o.value)).toEqual(["coarse", "fine", "binary"]);
    expect(text(select.options[0])).toMatch(/^coarse: four classes/);
    expect(n.value).toBe("5");
    expect(text(target.querySelector(".explain"))).toMatch(
      /^Building asks the language model, for every chunk not scored yet, how much its 5 nearest neighbours add to it; .*pause or cancel it in the jobs list\.$/,
    );
    const before = statusCalls;
    (byTestId(target, "graph-build") as HTMLButtonElement).click();
    await settle();
    expect(calls("build_graph")).toEqual([["build_graph", { rubric: "coarse", n: 5 }]]);
    expect(statusCalls).toBe(before + 1);
    expect(calls("library_overview")).toHaveLength(1);
    expect(toasts.map((t) => t.message)).toEqual(["Graph job #13 queued: coarse rubric, 5 neighbours per chunk"]);
    destroy();
  });

  it("builds another rubric with the neighbours chosen, and refuses a count out of range", async () => {
    const { target, destroy } = await panel();
    const select = byTestId(target, "graph-rubric-select") as HTMLSelectElement;
    const n = byTestId(target, "graph-neighbours") as HTMLInputElement;
    const button = byTestId(target, "graph-build") as HTMLButtonElement;
    select.value = "fine";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    for (const bad of ["0", "21", "2.5", ""]) {
      n.value = bad;
      n.dispatchEvent(new Event("input", { bubbles: true }));
      flushSync();
      expect(button.disabled, bad).toBe(true);
      expect(text(target.querySelector(".field-error"))).toBe("Choose from 1 to 20 neighbours per chunk.");
    }
    n.value = "8";
    n.dispatchEvent(new Event("input", { bubbles: true }));
    flushSync();
    expect(button.disabled).toBe(false);
    expect(target.querySelector(".field-error")).toBeNull();
    button.click();
    await settle();
    expect(calls("build_graph")).toEqual([["build_graph", { rubric: "fine", n: 8 }]]);
    destroy();
  });

  it("says why a build could not start", async () => {
    const { target, destroy } = await panel();
    shell.invoke.mockImplementation(async (command: string) => {
      if (command === "build_graph") throw { code: "internal", message: "the model is not loaded", details: null };
      return command === "graph_status" ? structuredClone(status) : null;
    });
    (byTestId(target, "graph-build") as HTMLButtonElement).click();
    await settle();
    expect(toasts.map((t) => [t.kind, t.message])).toEqual([
      ["error", "Could not start building the graph: the model is not loaded"],
    ]);
    expect((byTestId(target, "graph-build") as HTMLButtonElement).disabled).toBe(false);
    destroy();
  });

  it("follows a graph job's progress events, at most once a second", async () => {
    vi.useFakeTimers();
    const { target, destroy } = await panel();
    expect(statusCalls).toBe(1);

    status.rubrics = [rubric({ scored: 301, pending: 95 })];
    library.applyEngineEvents([progress()]);
    flushSync();
    library.applyEngineEvents([progress({ done: 202 })]);
    flushSync();
    library.applyEngineEvents([progress({ done: 203 })]);
    flushSync();
    // Indexing progress says nothing about the graph.
    library.applyEngineEvents([progress({ job_id: 3, kind: "ingest", phase: "embedding" })]);
    flushSync();
    expect(statusCalls).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(statusCalls).toBe(2);
    expect(text(byTestId(target, "graph-coverage"))).toMatch(/^301 of 400 chunks scored/);

    // The job's last event refreshes once more; then nothing is left pending.
    status.rubrics = [rubric({ scored: 396, pending: 0 })];
    status.jobs = [job({ state: "done" })];
    library.applyEngineEvents([progress({ phase: "finished", done: 296 })]);
    flushSync();
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(statusCalls).toBe(3);
    expect(byTestId(target, "graph-rubric")!.dataset).toMatchObject({ pending: "0", jobState: "done" });
    await vi.advanceTimersByTimeAsync(5000);
    expect(statusCalls).toBe(3);
    destroy();
  });

  it("looks again every few seconds while a graph job is active, and stops once none is", async () => {
    vi.useFakeTimers();
    status = { chunks: 400, rubrics: [], jobs: [job({ state: "queued" })] };
    const { target, destroy } = await panel();
    expect(statusCalls).toBe(1);
    await vi.advanceTimersByTimeAsync(4999);
    expect(statusCalls).toBe(1);
    // The job ended without a last progress event.
    status = { chunks: 400, rubrics: [rubric({ pending: 0 })], jobs: [job({ state: "cancelled" })] };
    await vi.advanceTimersByTimeAsync(50);
    await settle();
    expect(statusCalls).toBe(2);
    expect(byTestId(target, "graph-rubric")!.dataset).toMatchObject({ pending: "0", jobState: "cancelled" });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(statusCalls).toBe(2);
    destroy();
  });

  it("shows a queued build before its first chunk is scored", async () => {
    status = { chunks: 400, rubrics: [], jobs: [job({ state: "queued", payload: { rubric: "binary", n: 5 } })] };
    const { target, destroy } = await panel();
    const block = byTestId(target, "graph-rubric")!;
    expect(block.dataset).toMatchObject({ rubric: "binary", jobState: "queued" });
    expect(text(block)).toContain("Waiting to score the first chunk.");
    expect(byTestId(target, "graph-none")).toBeNull();
    destroy();
  });

  it("says when no graph is built, and when there is nothing to score", async () => {
    status = { chunks: 400, rubrics: [], jobs: [] };
    const built = await panel();
    expect(text(byTestId(built.target, "graph-none"))).toBe("No graph built yet.");
    expect((byTestId(built.target, "graph-build") as HTMLButtonElement).disabled).toBe(false);
    built.destroy();

    status = { chunks: 0, rubrics: [], jobs: [] };
    const empty = await panel();
    expect((byTestId(empty.target, "graph-build") as HTMLButtonElement).disabled).toBe(true);
    expect(text(empty.target.querySelector(".explain"))).toBe("There is nothing to score until a folder is indexed.");
    empty.destroy();
  });

  it("says when the status cannot be read, and tries again", async () => {
    shell.invoke.mockImplementation(async () => {
      throw { code: "internal", message: "database is locked", details: null };
    });
    const { target, destroy } = await panel();
    expect(text(target.querySelector('[role="alert"]'))).toContain("database is locked");
    shell.invoke.mockImplementation(async () => structuredClone(status));
    [...target.querySelectorAll("button")].find((b) => text(b) === "Try again")!.click();
    await settle();
    expect(target.querySelector(".error-notice")).toBeNull();
    expect(byTestId(target, "graph-rubric")).not.toBeNull();
    destroy();
  });
});
