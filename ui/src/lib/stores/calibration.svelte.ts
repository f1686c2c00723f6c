// Settings' "Calibrate for CRP-RAG", as `folio models calibrate`: the saved
// language model's perplexity measured on a fixed probe set, and the
// threshold that separates answers its knowledge holds from answers it does
// not, which CRP-RAG's sufficiency check then uses for that model. A
// calibration takes about a minute: kept outside the view so it goes on,
// its progress shown, while the person is elsewhere and comes back.
import { api, toIpcError } from "$lib/api";
import type { Calibration } from "$lib/bindings/Calibration";
import type { IpcError } from "$lib/bindings/IpcError";
import type { Progress } from "$lib/bindings/Progress";
import { showToast } from "$lib/stores/toasts.svelte";

/** What was being done when the shell refused. */
export type CalibrationAction = "read" | "calibrate";

export class CalibrationStore {
  /** The saved model's calibration; null when it has none, or until read. */
  calibration = $state<Calibration | null>(null);
  /** Whether `calibration` is the shell's word (read, or just measured). */
  loaded = $state(false);
  running = $state(false);
  cancelling = $state(false);
  /** How far the running calibration has got; null before its first answer. */
  progress = $state<Progress | null>(null);
  /** Why the last read or calibration was refused; null once one succeeds. A cancel is no error. */
  error = $state<IpcError | null>(null);
  /** What `error` was refused. */
  failed = $state<CalibrationAction>("read");

  // A read that comes back after a calibration began is older than its result: dropped.
  private generation = 0;

  /** Reads the saved model's calibration (Settings opening). Nothing is read while one runs. */
  async load(): Promise<void> {
    if (this.running) return;
    const generation = ++this.generation;
    try {
      const calibration = await api.modelCalibration();
      if (generation !== this.generation) return;
      this.calibration = calibration;
      this.loaded = true;
      this.error = null;
    } catch (error) {
      if (generation !== this.generation) return;
      this.loaded = false;
      this.error = toIpcError(error);
      this.failed = "read";
    }
  }

  /** Calibrates the saved model; its result, once saved by the shell, replaces the one shown. */
  async calibrate(): Promise<void> {
    if (this.running) return;
    ++this.generation;
    this.running = true;
    this.progress = null;
    this.error = null;
    try {
      this.calibration = await api.calibrateModel((progress) => (this.progress = progress));
      this.loaded = true;
    } catch (error) {
      const refused = toIpcError(error);
      // Cancelled is what the person asked for: back to idle, the old calibration still shown.
      if (!this.cancelling && refused.code !== "cancelled") {
        this.error = refused;
        this.failed = "calibrate";
      }
    } finally {
      this.running = false;
      this.cancelling = false;
      this.progress = null;
    }
  }

  async cancel(): Promise<void> {
    if (!this.running || this.cancelling) return;
    this.cancelling = true;
    try {
      await api.cancelCalibration();
    } catch (error) {
      this.cancelling = false;
      showToast(`Could not cancel: ${toIpcError(error).message}`, "error");
    }
  }
}

export const modelCalibration = new CalibrationStore();
