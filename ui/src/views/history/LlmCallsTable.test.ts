// The model-calls table: how each reply was held to its shape, and a call a
// server could not hold marked as read leniently; no column where no call
// asked for a shape.
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

function call(step: string, shaping: LlmCallRow["shaping"]): LlmCallRow {
  return { step, prompt_tokens: 10, completion_tokens: 3, wall_ms: 40, finish: "stop", error: null, shaping };
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
  });
});
