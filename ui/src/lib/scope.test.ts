import { describe, expect, it } from "vitest";
import type { Scope } from "$lib/bindings/Scope";
import { describeScope, FORMATS, isWholeLibrary, toggled, typedPath, wholeLibrary } from "./scope";

const scope = (part: Partial<Scope>): Scope => ({ ...wholeLibrary(), ...part });

describe("scopes", () => {
  it("start as the whole library, which any one narrowing ends", () => {
    expect(wholeLibrary()).toEqual({ paths: [], collections: [], formats: [], since: null, tags: [] });
    expect(wholeLibrary()).not.toBe(wholeLibrary());
    expect(isWholeLibrary(wholeLibrary())).toBe(true);
    expect(isWholeLibrary(scope({ paths: ["/notes"] }))).toBe(false);
    expect(isWholeLibrary(scope({ collections: ["work"] }))).toBe(false);
    expect(isWholeLibrary(scope({ formats: ["pdf"] }))).toBe(false);
    expect(isWholeLibrary(scope({ tags: ["rust"] }))).toBe(false);
    expect(isWholeLibrary(scope({ since: "2026-01-31" }))).toBe(false);
    // An emptied date field is no day.
    expect(isWholeLibrary(scope({ since: "" }))).toBe(true);
  });

  it("read as one line, places by their names", () => {
    expect(describeScope(wholeLibrary())).toBe("Whole library");
    expect(
      describeScope({
        paths: ["/home/me/notes", "/home/me/papers/"],
        collections: ["work"],
        formats: ["pdf"],
        since: "2026-01-31",
        tags: ["rust"],
      }),
    ).toBe("in notes, papers · collection work · tag #rust · PDF · modified since 2026-01-31");
    expect(describeScope(scope({ collections: ["work", "home"], formats: ["markdown", "text"] }))).toBe(
      "collections work, home · Markdown, Plain text",
    );
    expect(describeScope(scope({ paths: ["/notes/rust/ch03-02-data-types.md"] }))).toBe("in ch03-02-data-types.md");
    expect(describeScope(scope({ since: "2026-01-31" }))).toBe("modified since 2026-01-31");
    // Nested tags by their whole path.
    expect(describeScope(scope({ tags: ["area/sub", "rust"] }))).toBe("tags #area/sub, #rust");
    // A name that is not UTF-8, as the engine keys it, reads with U+FFFD.
    expect(describeScope(scope({ paths: ["/notes/caf\uf7e9.md"] }))).toBe("in caf\ufffd.md");
  });

  it("tell apart places that share a name, and give full paths when asked", () => {
    const twins = scope({ paths: ["/a/notes", "/b/notes", "/c/papers"] });
    expect(describeScope(twins)).toBe("in a/notes, b/notes, papers");
    expect(describeScope(twins, { full: true })).toBe("in /a/notes, /b/notes, /c/papers");
    expect(describeScope(scope({ paths: ["C:\\Users\\me\\notes"] }))).toBe("in notes");
  });

  it("name every format the engine knows", () => {
    expect(FORMATS).toEqual(["markdown", "text", "html", "pdf", "docx", "pptx", "xlsx", "odt", "epub", "image"]);
    for (const format of FORMATS) expect(describeScope(scope({ formats: [format] }))).not.toBe(format);
  });

  it("take typed paths trimmed, without trailing separators", () => {
    expect(typedPath("  /home/me/notes/  ")).toBe("/home/me/notes");
    expect(typedPath("/home/me/notes//")).toBe("/home/me/notes");
    expect(typedPath("/")).toBe("/");
    expect(typedPath("   ")).toBe("");
    expect(typedPath("C:\\notes\\")).toBe("C:\\notes");
  });

  it("toggle a value in a list once", () => {
    expect(toggled(["a"], "b", true)).toEqual(["a", "b"]);
    expect(toggled(["a", "b"], "b", true)).toEqual(["a", "b"]);
    expect(toggled(["a", "b"], "a", false)).toEqual(["b"]);
    expect(toggled([], "a", false)).toEqual([]);
  });
});
