import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { HistoryStore } = await import("./history.svelte");

const run = (id: number, question: string) => ({ id, question });
const detail = (id: number) => ({ run: run(id, `run ${id}`), calls: [] });

/** Answers `runs` with `list` and `run_detail` with the asked run. */
function shellWith(list: () => unknown) {
  core.invoke.mockImplementation(async (command: string, args: { id?: number }) =>
    command === "runs" ? list() : command === "run_detail" ? detail(args.id ?? 0) : undefined,
  );
}

describe("HistoryStore", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    core.invoke.mockReset();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("searches once the person stops typing", async () => {
    shellWith(() => [run(1, "lifetimes")]);
    const store = new HistoryStore(250, 50);
    store.search("l");
    store.search("li");
    await vi.advanceTimersByTimeAsync(200);
    store.search("life ");
    await vi.advanceTimersByTimeAsync(249);
    expect(core.invoke).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(core.invoke).toHaveBeenNthCalledWith(1, "runs", { query: "life", limit: 50 });
    expect(core.invoke.mock.calls.filter(([c]) => c === "runs")).toHaveLength(1);
    expect(store.runs).toEqual([run(1, "lifetimes")]);
  });

  it("opens the newest run when none is open, and keeps an open one that is still listed", async () => {
    let list = [run(3, "c"), run(2, "b")];
    shellWith(() => list);
    const store = new HistoryStore(0, 50);
    await store.load();
    expect(store.selected?.run.id).toBe(3);
    await store.open(2);
    list = [run(4, "d"), run(2, "b")];
    await store.load();
    expect(store.selected?.run.id).toBe(2);
    list = [];
    await store.load();
    expect(store.selected).toBeNull();
  });

  it("sends null for an empty search", async () => {
    shellWith(() => []);
    const store = new HistoryStore(250, 50);
    store.search("   ");
    await vi.advanceTimersByTimeAsync(250);
    expect(core.invoke).toHaveBeenCalledWith("runs", { query: null, limit: 50 });
  });

  it("drops a slow earlier answer that arrives after a newer one", async () => {
    const answers: ((runs: unknown) => void)[] = [];
    shellWith(() => new Promise((resolve) => answers.push(resolve)));
    const store = new HistoryStore(0, 50);
    store.query = "old";
    const first = store.load();
    store.query = "new";
    const second = store.load();
    answers[1]([run(2, "new")]);
    await second;
    answers[0]([run(1, "old")]);
    await first;
    expect(store.runs).toEqual([run(2, "new")]);
    expect(store.loading).toBe(false);
  });

  it("removes a deleted run from the list and closes it", async () => {
    shellWith(() => [run(1, "a"), run(2, "b")]);
    const store = new HistoryStore(0, 50);
    await store.load();
    await store.open(2);
    expect(store.selected?.run.id).toBe(2);
    await store.remove(2);
    expect(core.invoke).toHaveBeenLastCalledWith("delete_run", { id: 2 });
    expect(store.runs.map((r) => r.id)).toEqual([1]);
    expect(store.selected).toBeNull();
  });
});
