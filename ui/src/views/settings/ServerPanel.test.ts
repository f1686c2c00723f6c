// Settings' server switch against a fake shell: switching sends the address
// typed and shows where the library is served, the token (hidden until
// Show, in the curl command too), where it is kept and what to paste into
// clients; a refusal is shown and the switch goes back to off; a port in
// use is said; the address can be edited only while off; Copy puts the
// real text on the clipboard; and what the shell sends is shown as text.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ServerView } from "$lib/bindings/ServerView";
import { notServing, serving as servingAt } from "$lib/testing/server";
import { settle, type } from "$lib/testing/settle";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: ServerPanel } = await import("./ServerPanel.svelte");
const { localServer } = await import("$lib/stores/server.svelte");
const { toasts } = await import("$lib/stores/toasts.svelte");
const { expectInert, expectVisible, HOSTILE } = await import("$lib/testing/hostile");

const TOKEN = "fol_3q9ZkVb7TnW2xYc4";

const off = notServing;
const serving = (address: string, token = TOKEN) => servingAt(address, token);

/** What server_view answers next. */
let viewed: () => Promise<ServerView>;
/** What switch_server answers next, given what it was sent. */
let switched: (args: { on: boolean; address: string }) => Promise<ServerView>;

let target: HTMLElement;
let instance: ReturnType<typeof mount>;
let clipboard: { writeText: ReturnType<typeof vi.fn> };

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const toggle = () => q<HTMLInputElement>("server-switch")!;
const address = () => q<HTMLInputElement>("server-address")!;
const status = () => q("server-status")!.textContent!.trim();
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command).map(([, args]) => args);

async function flip() {
  toggle().click();
  await settle();
}

async function remount() {
  unmount(instance);
  instance = mount(ServerPanel, { target });
  await settle();
}

beforeEach(async () => {
  viewed = async () => off;
  switched = async ({ on, address }) => (on ? serving(address === "127.0.0.1:0" ? "127.0.0.1:45123" : address) : off);
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string, args: { on: boolean; address: string }) => {
    if (command === "server_view") return viewed();
    if (command === "switch_server") return switched(args);
    throw { code: "internal", message: `unexpected command ${command}`, details: null };
  });
  // The store outlives the view, as it does in the app: start each test afresh.
  Object.assign(localServer, { view: null, address: "", switching: null, error: null });
  toasts.splice(0);
  clipboard = { writeText: vi.fn(async () => undefined) };
  Object.defineProperty(navigator, "clipboard", { value: clipboard, configurable: true });
  target = document.body.appendChild(document.createElement("div"));
  instance = mount(ServerPanel, { target });
  await settle();
});

afterEach(() => {
  unmount(instance);
  target.remove();
});

describe("ServerPanel", () => {
  it("says what it is for, and shows the library not served, at the shell's address, editable", () => {
    expect(calls("server_view")).toEqual([undefined]);
    expect(target.querySelector("h2")!.textContent).toBe("Serve to other apps");
    const text = q("server-panel")!.textContent!.replace(/\s+/g, " ");
    expect(text).toContain("Other apps on this computer (chat apps, assistants, scripts) can search and ask this library.");
    expect(text).toContain("Only this machine can connect, and each app needs the token.");
    // An accessible switch, named by its label.
    expect(toggle().type).toBe("checkbox");
    expect(toggle().getAttribute("role")).toBe("switch");
    expect(toggle().closest("label")!.textContent).toContain("Serve this library");
    expect(toggle().checked).toBe(false);
    expect(address().value).toBe("127.0.0.1:7733");
    expect(address().disabled).toBe(false);
    expect(target.querySelector<HTMLLabelElement>('label[for="server-address"]')).not.toBeNull();
    expect(status()).toBe("Off: no other app can reach this library.");
    expect(q("server-token")).toBeNull();
    expect(q("server-curl")).toBeNull();
  });

  it("switches on at the address typed and shows where, the token, where it is kept and the client settings", async () => {
    type(address(), "  127.0.0.1:0 ");
    await flip();
    expect(calls("switch_server")).toEqual([{ on: true, address: "127.0.0.1:0" }]);
    expect(toggle().checked).toBe(true);
    // Port 0 took a free port: the status and the field say which.
    expect(status()).toBe("Serving on http://127.0.0.1:45123");
    expect(address().value).toBe("127.0.0.1:45123");
    expect(q("server-token")).not.toBeNull();
    expect(q("server-token-kept")!.textContent).toContain("Kept in /home/me/.local/share/folio/server-token.");
    const configs = q("server-clients")!.textContent!.replace(/\s+/g, " ");
    expect(configs).toContain("Chat apps (OpenAI-compatible)");
    expect(q("server-openai-url")!.textContent).toBe("http://127.0.0.1:45123/v1");
    expect(q("server-mcp-url")!.textContent).toBe("http://127.0.0.1:45123/mcp");
    expect(configs).toContain("The token above");
    expect(configs).toContain("folio/<method>");
    expect(configs).toContain("folio/vanilla-rag");
    expect(q("server-curl")!.textContent).toMatch(/^curl -s -H 'Authorization: Bearer •+' .* http:\/\/127\.0\.0\.1:45123\/api\/search$/);
    // The whole curl command sits in a code block, one element.
    expect(q("server-curl")!.tagName).toBe("PRE");
  });

  it("hides the token, in the curl command too, until Show, and again on Hide", async () => {
    await flip();
    expect(q("server-panel")!.textContent).not.toContain(TOKEN);
    expect(q("server-token")!.textContent).toMatch(/^•+$/);
    const show = q<HTMLButtonElement>("server-token-toggle")!;
    expect(show.textContent!.trim()).toBe("Show");

    show.click();
    flushSync();
    expect(q("server-token")!.textContent).toBe(TOKEN);
    expect(q("server-curl")!.textContent).toContain(`Authorization: Bearer ${TOKEN}'`);
    expect(show.textContent!.trim()).toBe("Hide");

    show.click();
    flushSync();
    expect(q("server-panel")!.textContent).not.toContain(TOKEN);
  });

  it("shows a refusal with what to do, and the switch goes back to off with the address as typed", async () => {
    switched = async () => {
      throw {
        code: "not_loopback",
        message: "the app serves only this machine (a loopback address such as 127.0.0.1)",
        details: null,
      };
    };
    type(address(), "0.0.0.0:7733");
    await flip();
    expect(calls("switch_server")).toEqual([{ on: true, address: "0.0.0.0:7733" }]);
    const notice = q("server-panel")!.querySelector('[role="alert"]')!;
    expect(notice.textContent).toContain("The library was not served");
    expect(notice.textContent).toContain("the app serves only this machine");
    expect(notice.textContent).toContain("Correct the address");
    expect(toggle().checked).toBe(false);
    expect(toggle().disabled).toBe(false);
    expect(address().value).toBe("0.0.0.0:7733");
    expect(address().disabled).toBe(false);
    expect(status()).toBe("Off: no other app can reach this library.");

    // Switching on again, at a good address, clears the refusal.
    switched = async ({ address }) => serving(address);
    type(address(), "127.0.0.1:7734");
    await flip();
    expect(q("server-panel")!.querySelector('[role="alert"]')).toBeNull();
    expect(status()).toBe("Serving on http://127.0.0.1:7734");
  });

  it("says why it is not serving when the port is in use, the switch left on so it can be switched off", async () => {
    switched = async ({ address }) => ({ ...off, on: true, address, error: "could not listen on 127.0.0.1:7733: address in use" });
    await flip();
    expect(toggle().checked).toBe(true);
    expect(status()).toBe("Switched on, but not serving: could not listen on 127.0.0.1:7733: address in use");
    expect(q("server-token")).toBeNull();
    // Switching off forgets the address; then it can be changed.
    expect(address().disabled).toBe(true);
    switched = async ({ address }) => ({ ...off, address });
    await flip();
    expect(toggle().checked).toBe(false);
    expect(address().disabled).toBe(false);
  });

  it("keeps the address field disabled while serving, and while a switch is with the shell", async () => {
    let answer!: (view: ServerView) => void;
    switched = () => new Promise((resolve) => (answer = resolve));
    await flip();
    expect(toggle().checked).toBe(true);
    expect(toggle().disabled).toBe(true);
    expect(address().disabled).toBe(true);
    expect(q("server-panel")!.textContent).toContain("Switching on…");
    toggle().click();
    await settle();
    expect(calls("switch_server")).toHaveLength(1);

    answer(serving("127.0.0.1:7733"));
    await settle();
    expect(toggle().disabled).toBe(false);
    expect(toggle().checked).toBe(true);
    expect(address().disabled).toBe(true);
    expect(q("server-panel")!.textContent).not.toContain("Switching on…");
  });

  it("switches off: the token and settings go, the address typed stays and can be edited again", async () => {
    type(address(), "127.0.0.1:8001");
    await flip();
    expect(address().disabled).toBe(true);
    await flip();
    expect(calls("switch_server")).toEqual([
      { on: true, address: "127.0.0.1:8001" },
      { on: false, address: "127.0.0.1:8001" },
    ]);
    expect(toggle().checked).toBe(false);
    expect(status()).not.toContain("Serving");
    expect(q("server-token")).toBeNull();
    expect(q("server-clients")).toBeNull();
    // The shell forgets the address once off (its view says the default): the field keeps it.
    expect(address().value).toBe("127.0.0.1:8001");
    expect(address().disabled).toBe(false);
  });

  it("shows the library served when Settings opens on a running server, and keeps a typed address across visits", async () => {
    viewed = async () => serving("127.0.0.1:7733");
    await remount();
    expect(toggle().checked).toBe(true);
    expect(status()).toBe("Serving on http://127.0.0.1:7733");
    expect(address().disabled).toBe(true);

    viewed = async () => off;
    await flip();
    type(address(), "127.0.0.1:9000");
    await remount();
    expect(address().value).toBe("127.0.0.1:9000");
  });

  it("shows a failure to read the server's state, with the switch held until a read works", async () => {
    viewed = async () => {
      throw { code: "secret_storage", message: "the token file could not be read", details: null };
    };
    await remount();
    const notice = q("server-panel")!.querySelector('[role="alert"]')!;
    expect(notice.textContent).toContain("Could not tell whether the library is served");
    expect(notice.textContent).toContain("the token file could not be read");
    expect(toggle().disabled).toBe(true);
    expect(address().disabled).toBe(true);

    viewed = async () => off;
    q<HTMLButtonElement>("server-read-again")!.click();
    await settle();
    expect(q("server-panel")!.querySelector('[role="alert"]')).toBeNull();
    expect(toggle().disabled).toBe(false);
    expect(status()).toBe("Off: no other app can reach this library.");
  });

  it("copies the real token and curl command, hidden or not, and says so", async () => {
    await flip();
    q<HTMLButtonElement>("server-token-copy")!.click();
    await settle();
    q<HTMLButtonElement>("server-curl-copy")!.click();
    await settle();
    q<HTMLButtonElement>("server-openai-url-copy")!.click();
    await settle();
    q<HTMLButtonElement>("server-api-key-copy")!.click();
    await settle();
    expect(clipboard.writeText.mock.calls.map(([text]) => text)).toEqual([
      TOKEN,
      serving("127.0.0.1:7733").clients!.curl,
      "http://127.0.0.1:7733/v1",
      TOKEN,
    ]);
    expect(toasts.map((t) => [t.kind, t.message])).toEqual([
      ["info", "Copied the token"],
      ["info", "Copied the curl command"],
      ["info", "Copied the base URL"],
      ["info", "Copied the API key"],
    ]);
    // A toast never carries the token.
    expect(toasts.some((t) => t.message.includes(TOKEN))).toBe(false);

    clipboard.writeText.mockRejectedValueOnce(new Error("not allowed"));
    q<HTMLButtonElement>("server-token-copy")!.click();
    await settle();
    expect(toasts.at(-1)).toMatchObject({ kind: "error", message: "Could not copy the token: not allowed" });
  });

  it("renders what the shell sends as text", async () => {
    const hostile: ServerView = {
      on: true,
      running: true,
      address: HOSTILE,
      error: null,
      token: HOSTILE,
      token_kept_in: HOSTILE,
      clients: { base_url: HOSTILE, openai_base_url: HOSTILE, mcp_url: HOSTILE, curl: HOSTILE },
    };
    switched = async () => hostile;
    await flip();
    q<HTMLButtonElement>("server-token-toggle")!.click();
    flushSync();
    const panel = q("server-panel")!;
    expectVisible(q("server-token")!);
    expectVisible(q("server-curl")!);
    expectVisible(q("server-token-kept")!);
    expectVisible(q("server-openai-url")!);
    expectVisible(q("server-mcp-url")!);
    expectVisible(q("server-status")!);
    expectInert(panel.querySelector(".clients")!);
    for (const id of ["server-token", "server-token-kept", "server-status"]) expectInert(q(id)!);

    switched = async () => ({ ...off, error: HOSTILE });
    await flip();
    expectVisible(q("server-status")!);
    expectInert(q("server-status")!);
  });
});
