// The model-calls table: how each reply was held to its shape, and a call a
// server could not hold marked as read leniently; the prompt tokens taken
// from the model's cache; no column where no call asked for a shape or
// took any from the cache.
import { mount, unmount } from "svelte";
import { afterEach, describe, expect, it } from "vitest";
import type { LlmCallRow } from "$lib/bindings/LlmCallRow";
import LlmCallsTable from "./LlmCallsTable.svelte";

let instance: ReturnType<typeof mount> | null = null;
const target = document.body;

afterEach(() => {
  if (instance) unmount(instance);
  instance = null;
  target.innerHTML = "";
});

function call(step: string, shaping: LlmCallRow["shaping"], cached_tokens = 0): LlmCallRow {
  return { step, prompt_tokens: 10, cached_tokens, completion_tokens: 3, wall_ms: 40, finish: "stop", error: null, shaping };
}

const cells = () => [...target.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((d) => d.textContent?.trim()));

describe("LlmCallsTable", () => {
  it("says how each reply was held, and which were read leniently", () => {
    instance = mount(LlmCallsTable, {
      target,
      props: { calls: [call("route", "schema"), call("route", "unconstrained"), call("read", null)] },
    });
    expect(target.querySelector("thead")?.textContent).toContain("Reply shape");
    expect(cells().map((r) => r[4])).toEqual(["JSON schema", "not held: read leniently", "—"]);
    expect(target.querySelectorAll("td.fell-back")).toHaveLength(1);
  });

  it("leaves the column out when no call asked for a shape", () => {
    instance = mount(LlmCallsTable, { target, props: { calls: [call("answer", null)] } });
    expect(target.querySelector("thead")?.textContent).not.toContain("Reply shape");
    expect(target.querySelector("thead")?.textContent).not.toContain("From cache");
  });

  it("shows the prompt tokens each call took from the model's cache", () => {
    instance = mount(LlmCallsTable, { target, props: { calls: [call("route", null), call("route", null, 7)] } });
    expect(target.querySelector("thead")?.textContent).toContain("From cache");
    expect(cells().map((r) => r.slice(1, 3))).toEqual([
      ["10", "0"],
      ["10", "7"],
    ]);
  });
});
