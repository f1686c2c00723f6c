// pdf.js, loaded on first use only (it is a large chunk of its own), and set
// up for the app's content security policy: its worker, fonts, CMaps and
// image-decoder fallbacks all come from the app's own origin (/pdfjs/ is
// filled by the pdfjsAssets plugin in vite.config.ts), no WebAssembly is
// compiled, and a PDF is only ever drawn: no scripting, no XFA forms.
import type { PDFDocumentLoadingTask } from "pdfjs-dist";
import workerUrl from "pdfjs-dist/build/pdf.worker.min.mjs?url";

type PdfJs = typeof import("pdfjs-dist");

let loading: Promise<PdfJs> | null = null;

function pdfjs(): Promise<PdfJs> {
  loading ??= import("pdfjs-dist").then(
    (module) => {
      module.GlobalWorkerOptions.workerSrc = workerUrl;
      return module;
    },
    (error: unknown) => {
      loading = null;
      throw error;
    },
  );
  return loading;
}

/** Starts parsing a PDF from its bytes; whoever gets the task destroys it when done. */
export async function openPdf(bytes: ArrayBuffer): Promise<PDFDocumentLoadingTask> {
  const { getDocument } = await pdfjs();
  return getDocument({
    data: new Uint8Array(bytes),
    cMapUrl: "/pdfjs/cmaps/",
    cMapPacked: true,
    standardFontDataUrl: "/pdfjs/standard_fonts/",
    wasmUrl: "/pdfjs/wasm/",
    useWasm: false,
    enableXfa: false,
    // Pages are drawn on the main thread, into the canvas itself, never
    // handed to an OffscreenCanvas in a renderer worker.
    disableWorkerRendering: true,
  });
}

/** Whether a render failed only because it was cancelled (the page or the size changed). */
export function isRenderCancelled(error: unknown): boolean {
  return (
    typeof error === "object" && error !== null && "name" in error && error.name === "RenderingCancelledException"
  );
}
