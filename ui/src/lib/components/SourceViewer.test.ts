// The source viewer with a PDF: it opens on the cited page with the passage
// marked, turns pages, and falls back to the extracted text. pdf.js itself is
// faked here (the real one draws in the end-to-end test): a document of
// upright A4 pages whose renders finish at once.
import { flushSync, mount, unmount } from "svelte";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { DocumentTree } from "$lib/bindings/DocumentTree";
import type { PassageBoxes } from "$lib/bindings/PassageBoxes";
import type { PdfRect } from "$lib/bindings/PdfRect";
import type { SourceTarget } from "$lib/source";
import { indexedDocument } from "$lib/testing/documents";

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
