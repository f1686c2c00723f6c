import { describe, expect, it } from "vitest";
import { fileName, shownPath } from "./source";

describe("shownPath", () => {
  it("leaves a UTF-8 path as it is", () => {
    expect(shownPath("/notes/café.md")).toBe("/notes/café.md");
  });

  it("shows bytes that are not UTF-8 as replacement characters, as the CLI does", () => {
    // The engine's key for the Latin-1 name caf\xe9-\xff.md.
    const key = "/notes/caf\uf7e9-\uf7ff.md";
    expect(shownPath(key)).toBe("/notes/caf\ufffd-\ufffd.md");
    expect(fileName(key)).toBe("caf\ufffd-\ufffd.md");
  });

  it("reads a real character of the escape block back from its escaped bytes", () => {
    // U+F7E9 in a name is written as its three UTF-8 bytes, each escaped.
    expect(shownPath("/notes/\uf7ef\uf79f\uf7a9.md")).toBe("/notes/\uf7e9.md");
  });
});
