// How a follow-up was read, in words, for every kind of rewrite; the
// model-written query stays text.
import { flushSync, mount, unmount } from "svelte";
import { describe, expect, it } from "vitest";

import type { Rewrite } from "$lib/bindings/Rewrite";
import { expectInert, HOSTILE } from "$lib/testing/hostile";
import FollowUpNote from "./FollowUpNote.svelte";

function note(rewrite: Rewrite | null): string {
  const target = document.body.appendChild(document.createElement("div"));
  const instance = mount(FollowUpNote, { target, props: { rewrite } });
  flushSync();
  const text = target.textContent?.replace(/\s+/g, " ").trim() ?? "";
  expectInert(target);
  unmount(instance);
  target.remove();
  return text;
}

describe("FollowUpNote", () => {
  it("says what the follow-up was searched as, or nothing for a first turn", () => {
    expect(note(null)).toBe("");
    expect(note({ kind: "not_needed" })).toBe("");
    expect(note({ kind: "standalone", query: HOSTILE })).toMatch(/^Searched as: /);
    expect(note({ kind: "joined", query: HOSTILE, because: "repeated_earlier" })).toMatch(
      /together \(the rewrite only repeated an earlier question\)$/,
    );
    expect(note({ kind: "joined", query: "Q? And floats?", because: "dropped_words" })).toMatch(
      /left out words the follow-up asks about/,
    );
    expect(note({ kind: "fell_back", reason: "the rewrite reply was empty" })).toBe(
      "Searched as asked: the rewrite reply was empty",
    );
  });
});
