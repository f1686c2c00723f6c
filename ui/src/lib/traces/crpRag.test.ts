// Where CRP-RAG's threshold came from, in the words the Sufficiency fact ends with.
import { describe, expect, it } from "vitest";
import { thresholdOrigin } from "./crpRag";

describe("thresholdOrigin", () => {
  it("names a calibration with both of its accuracies, and says when there was none", () => {
    expect(thresholdOrigin({ kind: "calibrated", accuracy: 0.9, held_out_accuracy: 0.8 })).toBe(
      " (calibrated for this model: 90% of the probes sorted right, 80% held out)",
    );
    expect(thresholdOrigin({ kind: "uncalibrated" })).toContain("not calibrated");
    expect(thresholdOrigin({ kind: "given" })).toBe(" (as asked)");
    expect(thresholdOrigin({ kind: "not_used" })).toBe("");
  });
});
