// The server switch's store against a fake shell: a read that comes back
// after a switch began does not undo the switch's answer, nothing is read
// while a switch is with the shell, and the address typed is what is sent.
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ServerView } from "$lib/bindings/ServerView";
import { notServing, serving } from "$lib/testing/server";

const core = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => core);

const { ServerStore } = await import("./server.svelte");

const off = notServing;
const on = serving("127.0.0.1:45123", "t");

const asked = (command: string) => core.invoke.mock.calls.filter(([c]) => c === command).map(([, args]) => args);

describe("ServerStore", () => {
  beforeEach(() => {
    core.invoke.mockReset();
  });

  it("drops a read that comes back after a switch began", async () => {
    let read!: (view: ServerView) => void;
    core.invoke.mockImplementation((command: string) =>
      command === "server_view" ? new Promise((resolve) => (read = resolve)) : Promise.resolve(on),
    );
    const store = new ServerStore();
    const loading = store.load();
    await vi.waitFor(() => expect(asked("server_view")).toHaveLength(1));
    store.address = " 127.0.0.1:0 ";
    await store.switchTo(true);
    expect(asked("switch_server")).toEqual([{ on: true, address: "127.0.0.1:0" }]);
    read(off);
    await loading;
    expect(store.running).toBe(true);
    expect(store.address).toBe("127.0.0.1:45123");
  });

  it("reads nothing, and takes no second switch, while a switch is with the shell", async () => {
    let answer!: (view: ServerView) => void;
    core.invoke.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    const store = new ServerStore();
    store.address = "127.0.0.1:7733";
    const switching = store.switchTo(true);
    expect(store.busy).toBe(true);
    expect(store.on).toBe(true);
    await store.load();
    await store.switchTo(false);
    expect(core.invoke.mock.calls.map(([c]) => c)).toEqual(["switch_server"]);
    answer(off);
    await switching;
    expect(store.busy).toBe(false);
    expect(store.on).toBe(false);
  });
});
