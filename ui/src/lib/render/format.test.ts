import { describe, expect, it } from "vitest";
import { formatAbout, formatBytes, formatDuration, formatEta, formatRate, percent, plural } from "./format";

describe("formatRate", () => {
  it("shows docs per second with sensible precision", () => {
    expect(formatRate(3.14159)).toBe("3.1 docs/s");
    expect(formatRate(42.6)).toBe("43 docs/s");
    expect(formatRate(2, "chunks")).toBe("2.0 chunks/s");
  });

  it("is empty when there is no rate yet", () => {
    expect(formatRate(null)).toBe("");
    expect(formatRate(0)).toBe("");
    expect(formatRate(Number.NaN)).toBe("");
  });
});

describe("formatEta", () => {
  it("rounds like a person would", () => {
    expect(formatEta(2)).toBe("a few seconds left");
    expect(formatEta(42.4)).toBe("42 s left");
    expect(formatEta(150)).toBe("about 3 min left");
    expect(formatEta(3600)).toBe("about 1 h left");
    expect(formatEta(3600 + 25 * 60)).toBe("about 1 h 25 min left");
  });

  it("is empty when unknown", () => {
    expect(formatEta(null)).toBe("");
    expect(formatEta(undefined)).toBe("");
    expect(formatEta(-1)).toBe("");
    expect(formatEta(Number.POSITIVE_INFINITY)).toBe("");
  });
});

describe("formatAbout", () => {
  it("says an estimated wait roughly, in minutes once it is long", () => {
    expect(formatAbout(0.4)).toBe("under a second");
    expect(formatAbout(13.6)).toBe("about 14 s");
    expect(formatAbout(89)).toBe("about 89 s");
    expect(formatAbout(150)).toBe("about 3 min");
  });

  it("is empty when there is nothing to say", () => {
    expect(formatAbout(Number.NaN)).toBe("");
    expect(formatAbout(Number.POSITIVE_INFINITY)).toBe("");
    expect(formatAbout(-1)).toBe("");
  });
});

describe("percent", () => {
  it("clamps and knows when the total is unknown", () => {
    expect(percent(5, 10)).toBe(50);
    expect(percent(12, 10)).toBe(100);
    expect(percent(0, 0)).toBeNull();
  });
});

describe("other formats", () => {
  it("formats sizes, durations and counts", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(50 * 1024 * 1024)).toBe("50 MiB");
    expect(formatDuration(250)).toBe("250 ms");
    expect(formatDuration(12_340)).toBe("12.3 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
    expect(formatDuration(null)).toBe("—");
    expect(plural(1, "document")).toBe("1 document");
    expect(plural(2, "passage")).toBe("2 passages");
  });
});
