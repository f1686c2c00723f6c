// The first-start card against a fake shell: it names the model that
// answers and its size, says "measuring…" until the shell has timed a
// question, then the seconds one takes, or plainly that timing failed; and
// it asks once per model, again when the model changes (hence a
// .svelte.test.ts file: its props are $state, changed in place as saving
// settings changes app_info).
import { flushSync, mount, unmount } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AnsweringModel } from "$lib/bindings/AnsweringModel";
import type { Pace } from "$lib/bindings/Pace";
import { settle } from "$lib/testing/settle";

const shell = vi.hoisted(() => ({ invoke: vi.fn(), Channel: class {} }));
vi.mock("@tauri-apps/api/core", () => shell);

const { default: FirstRunBanner } = await import("./FirstRunBanner.svelte");
const { app } = await import("$lib/stores/app.svelte");

const QWEN: AnsweringModel = {
  name: "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
  server: null,
  bytes: 1_117_320_768,
  kit: true,
};
const PACE: Pace = { prompt_tokens_per_s: 140, tokens_per_s: 24, seconds_per_question: 13.7 };

let target: HTMLElement | null = null;
let instance: ReturnType<typeof mount> | null = null;
const props = $state<{ model: AnsweringModel; onDismiss: () => void }>({ model: QWEN, onDismiss: () => {} });

/** Mounts the card with `model_pace` answering as `pace` does. */
function show(model: AnsweringModel, pace: () => Promise<Pace>) {
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string) => {
    if (command === "model_pace") return pace();
    throw { code: "internal", message: `unexpected command ${command}`, details: null };
  });
  target = document.body.appendChild(document.createElement("div"));
  props.model = model;
  instance = mount(FirstRunBanner, { target, props });
  flushSync();
}

const text = (id: string) =>
  target!.querySelector(`[data-testid="${id}"]`)?.textContent?.replace(/\s+/g, " ").trim() ?? "";

afterEach(() => {
  if (instance) unmount(instance);
  target?.remove();
  instance = null;
  target = null;
  app.modelPace = null;
});

describe("FirstRunBanner", () => {
  it("names a kit model, built in, with its size, then the seconds a question takes", async () => {
    let answer!: (pace: Pace) => void;
    show(QWEN, () => new Promise((resolve) => (answer = resolve)));
    expect(text("first-run-model")).toContain(
      "Folio answers with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), built in (1.0 GiB).",
    );
    expect(target!.querySelector("strong")?.textContent).toBe(QWEN.name);
    expect(text("first-run-pace")).toBe("How long a question takes on this computer: measuring…");
    expect(text("first-run")).toContain("stay on this computer");

    answer(PACE);
    await settle();
    expect(text("first-run-pace")).toBe("On this computer a question takes about 14 s.");
    expect(shell.invoke.mock.calls).toEqual([["model_pace", undefined]]);
  });

  it("shows a pace already timed at once when it is shown again, without asking again", async () => {
    show(QWEN, async () => PACE);
    await settle();
    unmount(instance!);
    target!.remove();

    show({ ...QWEN }, async () => {
      throw { code: "internal", message: "asked twice", details: null };
    });
    expect(text("first-run-pace")).toBe("On this computer a question takes about 14 s.");
    await settle();
    expect(shell.invoke).not.toHaveBeenCalled();
    expect(text("first-run-pace")).toBe("On this computer a question takes about 14 s.");
  });

  it("says plainly when the question could not be timed", async () => {
    show(QWEN, async () => {
      throw { code: "llm_load_failed", message: "the model file could not be loaded", details: "mmap failed" };
    });
    await settle();
    expect(text("first-run-pace")).toBe(
      "How long a question takes here could not be timed: the model file could not be loaded",
    );
    expect(text("first-run-model")).toContain("built in (1.0 GiB)");
  });

  it("names a file of the person's own by its size, and a server by its address", async () => {
    show({ name: "mistral-7b-instruct.Q4_K_M.gguf", server: null, bytes: 4_368_439_584, kit: false }, async () => PACE);
    await settle();
    expect(text("first-run-model")).toContain("Folio answers with mistral-7b-instruct.Q4_K_M.gguf (4.1 GiB).");
    expect(text("first-run-model")).not.toContain("built in");
    unmount(instance!);
    target!.remove();

    show({ name: "qwen2.5:7b", server: "http://127.0.0.1:11434/v1", bytes: null, kit: false }, async () => PACE);
    await settle();
    expect(text("first-run-model")).toContain("Folio answers with qwen2.5:7b at http://127.0.0.1:11434/v1.");
    expect(text("first-run")).not.toContain("stay on this computer");
  });

  it("times the model again once settings change it", async () => {
    show(QWEN, async () => PACE);
    await settle();
    let answer!: (pace: Pace) => void;
    shell.invoke.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    props.model = { ...QWEN, name: "Qwen2.5-Coder-0.5B-Instruct (Q4_K_M)", bytes: 491_400_064 };
    await settle();
    expect(text("first-run-model")).toContain("Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), built in (469 MiB)");
    expect(text("first-run-pace")).toContain("measuring…");
    answer({ ...PACE, seconds_per_question: 4.2 });
    await settle();
    expect(text("first-run-pace")).toBe("On this computer a question takes about 4 s.");
    expect(shell.invoke).toHaveBeenCalledTimes(2);
  });
});
