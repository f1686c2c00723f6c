// The source viewer with a PDF: it opens on the cited page with the passage
// marked, turns pages, and falls back to the extracted text. pdf.js itself is
// faked here (the real one draws in the end-to-end test): a document of
// upright A4 pages whose renders finish at once. And with a note: its tags,
// links and backlinks, which open in the viewer.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { DocumentTree } from "$lib/bindings/DocumentTree";
import type { NoteLinks } from "$lib/bindings/NoteLinks";
import type { PassageBoxes } from "$lib/bindings/PassageBoxes";
import type { PdfRect } from "$lib/bindings/PdfRect";
import type { SourceTarget } from "$lib/source";
import { indexedDocument } from "$lib/testing/documents";
import { expectInert, expectVisible, HOSTILE, HOSTILE_PAYLOADS } from "$lib/testing/hostile";
import { settle } from "$lib/testing/settle";

const shell = vi.hoisted(() => ({ invoke: vi.fn() }));
vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: class {} }));

const pdfjs = vi.hoisted(() => {
  const [width, height] = [595, 842];
  const renders: number[] = [];
  const page = (n: number) => ({
    getViewport: ({ scale }: { scale: number }) => ({
      width: width * scale,
      height: height * scale,
      convertToViewportPoint: (x: number, y: number) => [x * scale, (height - y) * scale],
    }),
    render: () => {
      renders.push(n);
      return { promise: Promise.resolve(), cancel: () => {} };
    },
    cleanup: () => {},
  });
  const getDocument = vi.fn(() => ({
    promise: Promise.resolve({ numPages: 3, getPage: async (n: number) => page(n) }),
    destroy: async () => {},
  }));
  return { renders, getDocument };
});
vi.mock("pdfjs-dist", () => ({ GlobalWorkerOptions: {}, getDocument: pdfjs.getDocument }));

const { default: SourceViewer } = await import("./SourceViewer.svelte");
const { app, closeSource, openSource } = await import("$lib/stores/app.svelte");

const PANEL_WIDTH = 595;

function documentTree(format: string): DocumentTree {
  const path = `/papers/almanac.${format === "pdf" ? "pdf" : "md"}`;
  return {
    document: indexedDocument(path, format, "Orchard Almanac"),
    tree: {
      nodes: [
        { parent: null, kind: "content", depth: 0, text: "Apples in August.", span: { start: 0, end: 17, page: 1 } },
        { parent: null, kind: "content", depth: 0, text: "Quince in April.", span: { start: 18, end: 34, page: 2 } },
      ],
    },
  };
}

/** Answers the viewer's commands: the tree, the PDF's bytes (or what `file` rejects with), and the passage's boxes. */
function fakeShell(tree: DocumentTree, boxes: PassageBoxes, file = () => Promise.resolve(new ArrayBuffer(8))) {
  shell.invoke.mockImplementation((command: string) => {
    if (command === "document_tree") return Promise.resolve(tree);
    if (command === "document_file") return file();
    if (command === "passage_boxes") return Promise.resolve(boxes);
    return Promise.reject({ code: "internal", message: `unexpected ${command}`, details: null });
  });
}

function open(target: SourceTarget) {
  const host = document.body.appendChild(document.createElement("div"));
  const instance = mount(SourceViewer, { target: host, props: { target, onClose: () => {} } });
  flushSync();
  const find = (testId: string) => host.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
  const findAll = (testId: string) => [...host.querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`)];
  return {
    host,
    find,
    findAll,
    click: (testId: string) => {
      find(testId)!.click();
      flushSync();
    },
    destroy: () => {
      unmount(instance);
      host.remove();
    },
  };
}

const cited = { path: "/papers/almanac.pdf", page: 2, span_start: 18, span_end: 34 };
// Two lines of the passage, 16 points apart, from the left margin of an A4 page.
const lines: PdfRect[] = [
  { x0: 72, y0: 744, x1: 260, y1: 756 },
  { x0: 72, y0: 728, x1: 240, y1: 740 },
];
const drawn: PassageBoxes = { kind: "drawn", boxes: lines };

describe("SourceViewer with a PDF", () => {
  beforeAll(() => {
    Element.prototype.scrollIntoView = () => {};
    vi.stubGlobal(
      "ResizeObserver",
      class {
        constructor(private readonly report: (entries: { contentRect: { width: number } }[]) => void) {}
        observe() {
          this.report([{ contentRect: { width: PANEL_WIDTH } }]);
        }
        disconnect() {}
      },
    );
  });

  afterEach(() => {
    pdfjs.renders.length = 0;
    shell.invoke.mockReset();
  });

  it("shows no Page/Text toggle for other documents", async () => {
    fakeShell(documentTree("markdown"), { kind: "gone" });
    const viewer = open({ ...cited, path: "/papers/almanac.md" });
    await vi.waitFor(() => expect(viewer.find("source-highlight")).not.toBeNull());
    expect(viewer.find("view-page")).toBeNull();
    expect(viewer.find("view-text")).toBeNull();
    expect(viewer.find("pdf-view")).toBeNull();
    viewer.destroy();
  });

  it("opens on the cited page with the passage marked, turns pages, and shows the text", async () => {
    fakeShell(documentTree("pdf"), drawn);
    const viewer = open(cited);
    await vi.waitFor(() => expect(viewer.find("pdf-view")?.dataset.renderedPage).toBe("2"));
    expect(viewer.find("view-page")?.getAttribute("aria-pressed")).toBe("true");
    expect(viewer.find("pdf-page-label")?.textContent).toBe("Page 2 of 3");
    expect(shell.invoke).toHaveBeenCalledWith("passage_boxes", {
      path: cited.path,
      page: 2,
      span_start: 18,
      span_end: 34,
    });

    // The panel is as wide as the page, so a point is a pixel.
    await vi.waitFor(() => expect(viewer.findAll("pdf-highlight")).toHaveLength(2));
    const [first, second] = viewer.findAll("pdf-highlight");
    expect([first.style.left, first.style.top, first.style.width, first.style.height]).toEqual([
      "72px",
      "86px",
      "188px",
      "12px",
    ]);
    expect(second.style.top).toBe("102px");
    expect(viewer.host.querySelector(".warning")).toBeNull();

    viewer.click("pdf-next");
    await vi.waitFor(() => expect(viewer.find("pdf-view")?.dataset.renderedPage).toBe("3"));
    expect(viewer.find("pdf-page-label")?.textContent).toBe("Page 3 of 3");
    expect(viewer.find("pdf-next")).toHaveProperty("disabled", true);
    expect(viewer.findAll("pdf-highlight")).toHaveLength(0);
    expect(pdfjs.renders).toEqual([2, 3]);

    viewer.click("view-text");
    expect(viewer.find("pdf-view")).toBeNull();
    expect(viewer.find("view-text")?.getAttribute("aria-pressed")).toBe("true");
    expect(viewer.find("source-highlight")?.textContent).toContain("Quince in April.");
    viewer.destroy();
  });

  it("warns when the cited passage is no longer in the PDF", async () => {
    fakeShell(documentTree("pdf"), { kind: "gone" });
    const viewer = open(cited);
    await vi.waitFor(() => expect(viewer.find("pdf-view")?.dataset.renderedPage).toBe("2"));
    await vi.waitFor(() => expect(viewer.host.querySelector(".warning")?.textContent).toMatch(/not in the document/));
    expect(viewer.find("pdf-unrecorded")).toBeNull();
    expect(viewer.findAll("pdf-highlight")).toHaveLength(0);
    viewer.destroy();
  });

  it("says so, without a warning, when where the passage is drawn was not recorded", async () => {
    fakeShell(documentTree("pdf"), { kind: "unrecorded" });
    const viewer = open(cited);
    await vi.waitFor(() => expect(viewer.find("pdf-unrecorded")?.textContent).toMatch(/was not recorded/));
    expect(viewer.find("pdf-view")?.dataset.renderedPage).toBe("2");
    expect(viewer.host.querySelector(".warning")).toBeNull();
    expect(viewer.findAll("pdf-highlight")).toHaveLength(0);
    viewer.destroy();
  });

  it("offers the extracted text when the PDF cannot be read", async () => {
    fakeShell(
      documentTree("pdf"),
      drawn,
      () => Promise.reject({ code: "not_found", message: "The file is gone.", details: null }),
    );
    const viewer = open(cited);
    await vi.waitFor(() => expect(viewer.host.querySelector(".error-notice")?.textContent).toMatch(/file is gone/));
    viewer.host.querySelector<HTMLButtonElement>(".error-notice button")!.click();
    flushSync();
    expect(viewer.find("pdf-view")).toBeNull();
    expect(viewer.find("source-highlight")?.textContent).toContain("Quince in April.");
    viewer.destroy();
  });
});

/** A note of the vault: its title, a heading, and a paragraph (node 2, where its links are written). */
function noteTree(path: string): DocumentTree {
  const name = path.split("/").at(-1)!.replace(/\.md$/, "");
  return {
    document: indexedDocument(path, "markdown", name),
    tree: {
      nodes: [
        { parent: null, kind: "structure", depth: 0, text: name, span: { start: 0, end: 0, page: null } },
        { parent: 0, kind: "structure", depth: 1, text: "Pruning", span: { start: 0, end: 10, page: null } },
        { parent: 1, kind: "content", depth: 1, text: `Body of ${name}.`, span: { start: 11, end: 30, page: null } },
      ],
    },
  };
}

const noLinks = (path: string): NoteLinks => ({
  document_id: 1,
  path,
  aliases: [],
  tags: [],
  outgoing: [],
  backlinks: [],
});

const LONG_CONTEXT = `Walked the orchard today; see [[Orchard]] for what to prune.\n\n${"And then some more words. ".repeat(10)}`;

const orchard: NoteLinks = {
  ...noLinks("/vault/Orchard.md"),
  aliases: ["Garden"],
  tags: ["area/sub", "fruit"],
  outgoing: [
    { written: "Apples#Pruning", embed: false, node_ordinal: 2, to: { document_id: 2, path: "/vault/Apples.md", node_ordinal: 1, missing: null } },
    { written: "Pears#Grafting", embed: false, node_ordinal: 2, to: { document_id: 3, path: "/vault/Pears.md", node_ordinal: 0, missing: "Grafting" } },
    { written: "Quince", embed: false, node_ordinal: 2, to: null },
    { written: "Apples", embed: true, node_ordinal: 2, to: { document_id: 2, path: "/vault/Apples.md", node_ordinal: 0, missing: null } },
  ],
  backlinks: [
    { document_id: 4, path: "/vault/Journal.md", node_ordinal: 2, context: LONG_CONTEXT, written: "Orchard", embed: false },
  ],
};

/** Answers with each note's tree, and `links(path)` for its links (or what that throws, as a rejection). */
function notesShell(links: (path: string) => NoteLinks) {
  shell.invoke.mockImplementation(async (command: string, args: { path: string }) => {
    if (command === "document_tree") return noteTree(args.path);
    if (command === "note_links") return links(args.path);
    throw { code: "internal", message: `unexpected ${command}`, details: null };
  });
}

/** The viewer as the app shows it: on whatever `app.source` is now, so a followed link opens in it. */
function openNote(path: string) {
  openSource({ path });
  const host = document.body.appendChild(document.createElement("div"));
  const instance = mount(SourceViewer, {
    target: host,
    props: {
      get target() {
        return app.source!;
      },
      onClose: closeSource,
    },
  });
  flushSync();
  const find = (testId: string) => host.querySelector<HTMLElement>(`[data-testid="${testId}"]`);
  const findAll = (testId: string) => [...host.querySelectorAll<HTMLElement>(`[data-testid="${testId}"]`)];
  return {
    host,
    find,
    findAll,
    destroy: () => {
      unmount(instance);
      host.remove();
      closeSource();
    },
  };
}

const trees = () => shell.invoke.mock.calls.filter(([c]) => c === "document_tree").map(([, args]) => args.path);

describe("SourceViewer with a note", () => {
  beforeAll(() => {
    Element.prototype.scrollIntoView = () => {};
  });

  afterEach(() => {
    shell.invoke.mockReset();
  });

  it("shows the note's tags, aliases, links and backlinks", async () => {
    notesShell((path) => (path === "/vault/Orchard.md" ? orchard : noLinks(path)));
    const viewer = openNote("/vault/Orchard.md");
    await vi.waitFor(() => expect(viewer.find("note-links")).not.toBeNull());
    expect(shell.invoke).toHaveBeenCalledWith("note_links", { path: "/vault/Orchard.md" });

    expect(viewer.findAll("note-tag").map((t) => [t.dataset.tag, t.textContent])).toEqual([
      ["area/sub", "#area/sub"],
      ["fruit", "#fruit"],
    ]);
    expect(viewer.find("note-links")?.textContent).toContain("Aliases: Garden");

    const links = viewer.findAll("outgoing-link");
    expect(links.map((l) => l.dataset.written)).toEqual(["Apples#Pruning", "Pears#Grafting", "Quince", "Apples"]);
    const [apples, pears, quince, embed] = links;
    const opens = (link: HTMLElement) => link.querySelector<HTMLButtonElement>('[data-testid="outgoing-link-open"]');
    expect(apples.textContent).toContain("[[Apples#Pruning]]");
    expect(opens(apples)?.textContent).toBe("Apples.md");
    expect(apples.textContent).not.toMatch(/no such|no note/);
    expect(opens(pears)?.textContent).toBe("Pears.md");
    expect(pears.textContent).toContain("no such heading there");
    // Nowhere to go: said, and nothing to click.
    expect(quince.textContent).toContain("no note has this name");
    expect(quince.querySelector("button")).toBeNull();
    expect(embed.textContent).toContain("![[Apples]]");
    expect(embed.textContent).toContain("embed");
    expect(apples.textContent).not.toContain("embed");

    const [backlink] = viewer.findAll("backlink");
    expect(viewer.findAll("backlink")).toHaveLength(1);
    expect(backlink.dataset.path).toBe("/vault/Journal.md");
    expect(backlink.querySelector('[data-testid="backlink-open"]')?.textContent).toBe("Journal.md");
    // One line of the context, cut short.
    const context = backlink.querySelector("p")!.textContent!;
    expect(context.startsWith("Walked the orchard today; see [[Orchard]] for what to prune. And then")).toBe(true);
    expect(context.length).toBeLessThanOrEqual(120);
    expect(context.endsWith("…")).toBe(true);
    viewer.destroy();
  });

  it("opens a backlink's note at the link, and a link's note where it lands", async () => {
    notesShell((path) => (path === "/vault/Orchard.md" ? orchard : noLinks(path)));
    const viewer = openNote("/vault/Orchard.md");
    await vi.waitFor(() => expect(viewer.find("backlink-open")).not.toBeNull());
    expect(viewer.find("source-highlight")).toBeNull();

    viewer.find("backlink-open")!.click();
    await settle();
    expect(trees()).toEqual(["/vault/Orchard.md", "/vault/Journal.md"]);
    expect(shell.invoke).toHaveBeenCalledWith("note_links", { path: "/vault/Journal.md" });
    expect(viewer.find("source-viewer")?.querySelector("h2")?.textContent).toBe("Journal");
    // The paragraph the link is written in is marked.
    expect(viewer.findAll("source-highlight").map((n) => n.textContent?.trim())).toEqual(["Body of Journal."]);
    // Journal has no links of its own: no section.
    expect(viewer.find("note-links")).toBeNull();

    openSource({ path: "/vault/Orchard.md" });
    await vi.waitFor(() => expect(viewer.find("outgoing-link-open")).not.toBeNull());
    viewer.find("outgoing-link-open")!.click();
    await settle();
    expect(trees().at(-1)).toBe("/vault/Apples.md");
    expect(viewer.findAll("source-highlight").map((n) => n.textContent?.trim())).toEqual(["Pruning"]);

    // A heading the note lacks lands on the note itself: nothing marked.
    openSource({ path: "/vault/Orchard.md" });
    await vi.waitFor(() => expect(viewer.findAll("outgoing-link-open")).toHaveLength(3));
    viewer.findAll("outgoing-link-open")[1].click();
    await settle();
    expect(trees().at(-1)).toBe("/vault/Pears.md");
    expect(viewer.findAll("source-highlight")).toEqual([]);
    expect(viewer.host.textContent).toContain("Body of Pears.");
    viewer.destroy();
  });

  it("shows no links section for a note with none, or whose links cannot be read", async () => {
    notesShell(noLinks);
    let viewer = openNote("/vault/Orchard.md");
    await vi.waitFor(() => expect(viewer.host.textContent).toContain("Body of Orchard."));
    await settle();
    expect(shell.invoke).toHaveBeenCalledWith("note_links", { path: "/vault/Orchard.md" });
    expect(viewer.find("note-links")).toBeNull();
    viewer.destroy();

    notesShell(() => {
      throw { code: "not_found", message: "/vault/Orchard.md is not in the library", details: null };
    });
    viewer = openNote("/vault/Orchard.md");
    await vi.waitFor(() => expect(viewer.host.textContent).toContain("Body of Orchard."));
    await settle();
    expect(viewer.find("note-links")).toBeNull();
    expect(viewer.host.querySelector(".error-notice")).toBeNull();
    expect(viewer.host.textContent).not.toContain("not in the library");
    viewer.destroy();
  });

  it("keeps hostile text of a note's links inert", async () => {
    const hostile: NoteLinks = {
      ...noLinks("/vault/Orchard.md"),
      aliases: [HOSTILE],
      tags: [HOSTILE],
      outgoing: [
        { written: HOSTILE, embed: false, node_ordinal: 2, to: { document_id: 2, path: `/vault/${HOSTILE}.md`, node_ordinal: 0, missing: HOSTILE } },
        { written: HOSTILE, embed: true, node_ordinal: 2, to: null },
      ],
      // Every payload as a context of its own, the megabytes-long one too.
      backlinks: HOSTILE_PAYLOADS.map((p, i) => ({
        document_id: 10 + i,
        path: `/vault/${p.text}.md`,
        node_ordinal: 2,
        context: p.text,
        written: HOSTILE,
        embed: false,
      })),
    };
    notesShell(() => hostile);
    const viewer = openNote("/vault/Orchard.md");
    await vi.waitFor(() => expect(viewer.find("note-links")).not.toBeNull());
    const section = viewer.find("note-links")!;
    expectInert(section);
    expectVisible(section);
    expect(viewer.findAll("backlink")).toHaveLength(HOSTILE_PAYLOADS.length);
    for (const context of section.querySelectorAll("li p")) expect(context.textContent!.length).toBeLessThanOrEqual(120);
    viewer.destroy();
  });
});

describe("SourceViewer with a table", () => {
  beforeAll(() => {
    Element.prototype.scrollIntoView = () => {};
  });

  afterEach(() => shell.invoke.mockReset());

  // A table node's cell is one line, its "|" escaped (folio-documents' table.rs).
  const hostileCell = HOSTILE.replace(/\s+/g, " ");
  const table: DocumentTree = {
    document: indexedDocument("/notes/parts.md", "markdown", "Parts"),
    tree: {
      nodes: [
        { parent: null, kind: "structure", depth: 0, text: "Parts", span: { start: 0, end: 7, page: null } },
        {
          parent: 0,
          kind: "content",
          depth: 1,
          text: `Part | Stock\npart-1 | 3\npart-2 \\| ${hostileCell.replaceAll("|", "\\|")} | 6\npart-3 | 9`,
          span: { start: 9, end: 90, page: null },
          table: { header_rows: 1 },
        },
      ],
    },
  };

  it("draws a cited table as a table with the cited rows marked", async () => {
    fakeShell(table, { kind: "gone" });
    const viewer = open({ path: "/notes/parts.md", span_start: 9, span_end: 90, rows: { first: 2, last: 3 } });
    await vi.waitFor(() => expect(viewer.find("source-table")).not.toBeNull());
    const headers = [...viewer.find("source-table")!.querySelectorAll("th")].map((th) => th.textContent);
    expect(headers).toEqual(["Part", "Stock"]);
    const rows = viewer.findAll("cited-row").map((row) => [...row.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows).toEqual([
      [`part-2 | ${hostileCell}`, "6"],
      ["part-3", "9"],
    ]);
    expect(viewer.find("source-table")!.querySelector("caption")!.textContent).toBe("Cited: rows 2–3");
    expectInert(viewer.host);
    viewer.destroy();
  });

  it("marks the whole table when the citation names no rows", async () => {
    fakeShell(table, { kind: "gone" });
    const viewer = open({ path: "/notes/parts.md", span_start: 9, span_end: 90 });
    await vi.waitFor(() => expect(viewer.find("source-highlight")).not.toBeNull());
    expect(viewer.findAll("cited-row")).toEqual([]);
    expect(viewer.find("source-highlight")!.querySelectorAll("tbody tr")).toHaveLength(3);
    viewer.destroy();
  });
});

