// Settings' "Calibrate for CRP-RAG" against a fake shell: the saved model's
// calibration, or that it has none; Calibrate streams "answer N of M" with a
// progress bar and a Cancel, then shows what was measured; a cancel goes
// back to idle with no error; a refusal is shown with its message; a model
// whose perplexity sorts the probes poorly gets a note; and a calibration
// keeps going, its progress shown, across leaving Settings and coming back.
import { mount, unmount } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Calibration } from "$lib/bindings/Calibration";
import type { Progress } from "$lib/bindings/Progress";
import { settle } from "$lib/testing/settle";

const shell = vi.hoisted(() => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  return { invoke: vi.fn(), Channel };
});
vi.mock("@tauri-apps/api/core", () => shell);

const { default: CalibratePanel } = await import("./CalibratePanel.svelte");
const { modelCalibration } = await import("$lib/stores/calibration.svelte");
const { toasts } = await import("$lib/stores/toasts.svelte");
const { expectInert, expectVisible, HOSTILE } = await import("$lib/testing/hostile");

/** 2025-03-14 09:26:53 UTC. */
const MEASURED_AT = 1741944413;

function calibration(extra: Partial<Calibration> = {}): Calibration {
  return {
    threshold: 1.23449,
    accuracy: 0.9167,
    held_out_accuracy: 0.875,
    known: [1.0213, 1.4567, 1.2],
    unknown: [1.8149, 4.1234, 2.5],
    measured_at: MEASURED_AT,
    ...extra,
  };
}

type Pending = { progress: (done: number, total: number) => void; finish: (c: Calibration) => void; fail: (e: unknown) => void };

/** What model_calibration answers next. */
let stored: () => Promise<Calibration | null>;
/** The calibrate_model call still with the shell. */
let pending: Pending | null;

let target: HTMLElement;
let instance: ReturnType<typeof mount>;

const q = <T extends HTMLElement = HTMLElement>(id: string) => target.querySelector<T>(`[data-testid="${id}"]`);
const panel = () => q("calibrate-panel")!;
const text = () => panel().textContent!.replace(/\s+/g, " ");
const start = () => q<HTMLButtonElement>("calibrate-start")!;
const alert = () => panel().querySelector('[role="alert"]');
const calls = (command: string) => shell.invoke.mock.calls.filter(([c]) => c === command).map(([, args]) => args);

async function calibrate() {
  start().click();
  await settle();
}

async function remount() {
  unmount(instance);
  instance = mount(CalibratePanel, { target });
  await settle();
}

beforeEach(async () => {
  stored = async () => null;
  pending = null;
  shell.invoke.mockReset();
  shell.invoke.mockImplementation(async (command: string, args: Record<string, unknown> = {}) => {
    switch (command) {
      case "model_calibration":
        return stored();
      case "calibrate_model": {
        const channel = args.on_progress as { onmessage: (progress: Progress) => void };
        return new Promise((finish, fail) => {
          pending = {
            progress: (done, total) => channel.onmessage({ done, total, failed: 0, rate: 0.4, eta_seconds: 50 }),
            finish,
            fail,
          };
        });
      }
      case "cancel_calibration":
        return undefined;
      default:
        throw { code: "internal", message: `unexpected command ${command}`, details: null };
    }
  });
  // The store outlives the view, as it does in the app: start each test afresh.
  Object.assign(modelCalibration, {
    calibration: null,
    loaded: false,
    running: false,
    cancelling: false,
    progress: null,
    error: null,
  });
  toasts.splice(0);
  target = document.body.appendChild(document.createElement("div"));
  instance = mount(CalibratePanel, { target });
  await settle();
});

afterEach(() => {
  unmount(instance);
  target.remove();
});

describe("CalibratePanel", () => {
  it("says what calibrating does, and that the model is not calibrated", () => {
    expect(calls("model_calibration")).toEqual([undefined]);
    expect(panel().querySelector("h2")!.textContent).toBe("Calibrate for CRP-RAG");
    expect(text()).toContain("Measures how sure the saved language model is");
    expect(q("calibrate-none")!.textContent).toBe("Not calibrated: CRP-RAG uses its default threshold.");
    expect(q("calibrate-threshold")).toBeNull();
    expect(start().textContent!.trim()).toBe("Calibrate");
    expect(start().getAttribute("aria-label")).toBe("Calibrate the language model");
    expect(start().disabled).toBe(false);
    expect(q("calibrate-progress")).toBeNull();
    expect(q("calibrate-cancel")).toBeNull();
    expect(alert()).toBeNull();
  });

  it("shows the stored calibration's threshold, accuracy, perplexity ranges and when it was measured", async () => {
    stored = async () => calibration();
    await remount();
    expect(q("calibrate-none")).toBeNull();
    expect(q("calibrate-threshold")!.textContent).toBe("1.234");
    // Measured in local time, as the person reads dates.
    const when = new Date(MEASURED_AT * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
    expect(when).toContain("2025");
    expect(q("calibrate-current")!.textContent!.replace(/\s+/g, " ").trim()).toBe(
      "Threshold 1.234 Accuracy sorts 92% of probes right (88% held out) " +
        "Perplexity, answer in the text 1.02–1.46 Perplexity, answer not in it 1.81–4.12 " +
        `Measured ${when}`,
    );
    // 92% sorts the probes well: no note.
    expect(q("calibrate-weak")).toBeNull();
  });

  it("streams the progress of a calibration, then shows what it measured", async () => {
    stored = async () => calibration();
    await remount();
    await calibrate();
    expect(calls("calibrate_model")).toHaveLength(1);
    expect(start().disabled).toBe(true);
    expect(q("calibrate-progress")!.textContent).toContain("Calibrating: starting…");
    expect(q("calibrate-cancel")!.textContent!.trim()).toBe("Cancel");
    expect(panel().getAttribute("aria-busy")).toBe("true");
    // A second press is not a second calibration.
    start().click();
    await settle();
    expect(calls("calibrate_model")).toHaveLength(1);

    pending!.progress(3, 24);
    await settle();
    expect(q("calibrate-progress")!.textContent).toContain("Calibrating: answer 3 of 24");
    const bar = q("calibrate-progress")!.querySelector("progress")!;
    expect(bar.getAttribute("aria-label")).toBe("Calibration progress");
    expect([bar.value, bar.max]).toEqual([3, 24]);
    pending!.progress(24, 24);
    await settle();
    expect(q("calibrate-progress")!.textContent).toContain("answer 24 of 24");
    // The old calibration stays shown until the new one comes.
    expect(q("calibrate-threshold")!.textContent).toBe("1.234");

    pending!.finish(calibration({ threshold: 2.0416, accuracy: 1, held_out_accuracy: 0.9583, known: [1.1, 1.9], unknown: [2.2, 7.777] }));
    await settle();
    expect(q("calibrate-threshold")!.textContent).toBe("2.042");
    expect(text()).toContain("sorts 100% of probes right (96% held out)");
    expect(text()).toContain("1.10–1.90");
    expect(text()).toContain("2.20–7.78");
    expect(q("calibrate-progress")).toBeNull();
    expect(q("calibrate-cancel")).toBeNull();
    expect(start().disabled).toBe(false);
    expect(panel().getAttribute("aria-busy")).toBe("false");
    expect(alert()).toBeNull();
  });

  it("cancels: asks the shell to stop, then goes back to idle with no error", async () => {
    stored = async () => calibration();
    await remount();
    await calibrate();
    pending!.progress(5, 24);
    await settle();
    q<HTMLButtonElement>("calibrate-cancel")!.click();
    await settle();
    expect(calls("cancel_calibration")).toEqual([undefined]);
    expect(q("calibrate-cancel")!.textContent!.trim()).toBe("Cancelling…");
    expect(q<HTMLButtonElement>("calibrate-cancel")!.disabled).toBe(true);

    // However the shell words the rejection, the person asked for it.
    pending!.fail({ code: "llm_failed", message: "the model failed on a probe: cancelled", details: null });
    await settle();
    expect(alert()).toBeNull();
    expect(q("calibrate-progress")).toBeNull();
    expect(q("calibrate-cancel")).toBeNull();
    expect(start().disabled).toBe(false);
    expect(q("calibrate-threshold")!.textContent).toBe("1.234");

    // A calibration cancelled elsewhere is no error either.
    await calibrate();
    pending!.fail({ code: "cancelled", message: "cancelled", details: null });
    await settle();
    expect(alert()).toBeNull();
    expect(start().disabled).toBe(false);
  });

  it("shows a refusal with its message, and nothing saved; calibrating again clears it", async () => {
    await calibrate();
    pending!.fail({
      code: "llm_failed",
      message:
        "qwen2.5:7b gives no log-probabilities, so there is nothing to calibrate: CRP-RAG checks steps on it by the model's own yes/no assessment, which needs no threshold",
      details: null,
    });
    await settle();
    expect(alert()!.textContent).toContain("The model was not calibrated");
    expect(alert()!.textContent).toContain("qwen2.5:7b gives no log-probabilities");
    expect(alert()!.textContent).toContain("the model's own yes/no assessment");
    expect(alert()!.textContent).toContain("Nothing was saved.");
    expect(q("calibrate-none")).not.toBeNull();
    expect(q("calibrate-progress")).toBeNull();
    expect(start().disabled).toBe(false);

    await calibrate();
    expect(alert()).toBeNull();
    pending!.finish(calibration());
    await settle();
    expect(q("calibrate-threshold")!.textContent).toBe("1.234");
  });

  it("notes when the model's perplexity sorts the probes poorly, stored or just measured", async () => {
    stored = async () => calibration({ accuracy: 0.75 });
    await remount();
    expect(q("calibrate-weak")!.textContent!.replace(/\s+/g, " ").trim()).toBe(
      "This model's perplexity tells sufficient knowledge from insufficient poorly, so CRP-RAG's checks on it are weak evidence.",
    );

    await calibrate();
    pending!.finish(calibration({ accuracy: 0.8 }));
    await settle();
    expect(q("calibrate-weak")).toBeNull();

    await calibrate();
    pending!.finish(calibration({ accuracy: 0.7917 }));
    await settle();
    expect(text()).toContain("sorts 79% of probes right");
    expect(q("calibrate-weak")).not.toBeNull();
  });

  it("keeps a calibration going, its progress shown, across leaving Settings and coming back", async () => {
    await calibrate();
    pending!.progress(7, 24);
    await settle();
    unmount(instance);
    pending!.progress(8, 24);
    instance = mount(CalibratePanel, { target });
    await settle();
    expect(q("calibrate-progress")!.textContent).toContain("answer 8 of 24");
    expect(start().disabled).toBe(true);
    // Nothing is read while it runs: its result is what will be stored.
    expect(calls("model_calibration")).toHaveLength(1);

    pending!.finish(calibration());
    await settle();
    expect(q("calibrate-threshold")!.textContent).toBe("1.234");
    expect(calls("calibrate_model")).toHaveLength(1);
  });

  it("shows a failure to read the calibration, and shell text as text", async () => {
    stored = async () => {
      throw { code: "internal", message: HOSTILE, details: null };
    };
    await remount();
    expect(alert()!.textContent).toContain("The calibration could not be read");
    expect(q("calibrate-none")).toBeNull();
    expect(q("calibrate-threshold")).toBeNull();
    expectVisible(alert()!);
    expectInert(panel());
    expect(start().disabled).toBe(false);
  });
});
