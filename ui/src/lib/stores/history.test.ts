import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { HistoryStore } = await import("./history.svelte");

const thread = (id: number, title: string) => ({ id, title, turns: 1, forked_from: null, created_at: 0, updated_at: 0 });
const detail = (id: number) => ({
  summary: thread(id, `thread ${id}`),
  turns: [{ run: { id: id * 10, thread_id: id, question: `thread ${id}` }, calls: [] }],
  gone: [],
});

/** Answers `threads` with `list` and `thread_detail` with the asked thread. */
function shellWith(list: () => unknown) {
  core.invoke.mockImplementation(async (command: string, args: { id?: number }) =>
    command === "threads" ? list() : command === "thread_detail" ? detail(args.id ?? 0) : undefined,
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

  it("searches threads once the person stops typing", async () => {
    shellWith(() => [thread(1, "lifetimes")]);
    const store = new HistoryStore(250, 50);
    store.search("l");
    store.search("li");
    await vi.advanceTimersByTimeAsync(200);
    store.search("life ");
    await vi.advanceTimersByTimeAsync(249);
    expect(core.invoke).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(core.invoke).toHaveBeenNthCalledWith(1, "threads", { query: "life", limit: 50 });
    expect(core.invoke.mock.calls.filter(([c]) => c === "threads")).toHaveLength(1);
    expect(store.threads).toEqual([thread(1, "lifetimes")]);
  });

  it("opens a thread's detail, turn by turn", async () => {
    shellWith(() => [thread(3, "c"), thread(2, "b")]);
    const store = new HistoryStore(0, 50);
    await store.load();
    await store.open(2);
    expect(core.invoke).toHaveBeenLastCalledWith("thread_detail", { id: 2 });
    expect(store.selected).toEqual(detail(2));
    expect(store.detailError).toBeNull();
  });

  it("keeps the error of a thread that could not be opened", async () => {
    core.invoke.mockRejectedValue({ code: "not_found", message: "no thread 5", details: null });
    const store = new HistoryStore(0, 50);
    await store.open(5);
    expect(store.detailError).toEqual({ code: "not_found", message: "no thread 5", details: null });
  });

  it("opens the most recent thread when none is open, and keeps an open one that is still listed", async () => {
    let list = [thread(3, "c"), thread(2, "b")];
    shellWith(() => list);
    const store = new HistoryStore(0, 50);
    await store.load();
    expect(store.selected?.summary.id).toBe(3);
    await store.open(2);
    list = [thread(4, "d"), thread(2, "b")];
    await store.load();
    expect(store.selected?.summary.id).toBe(2);
    list = [];
    await store.load();
    expect(store.selected).toBeNull();
  });

  it("sends null for an empty search", async () => {
    shellWith(() => []);
    const store = new HistoryStore(250, 50);
    store.search("   ");
    await vi.advanceTimersByTimeAsync(250);
    expect(core.invoke).toHaveBeenCalledWith("threads", { query: null, limit: 50 });
  });

  it("drops a slow earlier answer that arrives after a newer one", async () => {
    const answers: ((threads: unknown) => void)[] = [];
    shellWith(() => new Promise((resolve) => answers.push(resolve)));
    const store = new HistoryStore(0, 50);
    store.query = "old";
    const first = store.load();
    store.query = "new";
    const second = store.load();
    answers[1]([thread(2, "new")]);
    await second;
    answers[0]([thread(1, "old")]);
    await first;
    expect(store.threads).toEqual([thread(2, "new")]);
    expect(store.loading).toBe(false);
  });

  it("shows the thread opened last, even when an earlier one answers later", async () => {
    const answers = new Map<number, (detail: unknown) => void>();
    core.invoke.mockImplementation((_command: string, args: { id: number }) => new Promise((r) => answers.set(args.id, r)));
    const store = new HistoryStore(0, 50);
    const first = store.open(1);
    const second = store.open(2);
    answers.get(2)!(detail(2));
    await second;
    answers.get(1)!(detail(1));
    await first;
    expect(store.selected?.summary.id).toBe(2);
  });

  it("removes a deleted thread from the list and closes it", async () => {
    shellWith(() => [thread(1, "a"), thread(2, "b")]);
    const store = new HistoryStore(0, 50);
    await store.load();
    await store.open(2);
    expect(store.selected?.summary.id).toBe(2);
    await store.remove(2);
    expect(core.invoke).toHaveBeenLastCalledWith("delete_thread", { id: 2 });
    expect(store.threads.map((t) => t.id)).toEqual([1]);
    expect(store.selected).toBeNull();
  });
});
