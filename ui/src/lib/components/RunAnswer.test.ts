// An answer as the person reads it, from a hostile model and hostile
// documents: the streamed text, the rendered markdown, its sources, its
// error, and the cited document opened in the source viewer.
import { flushSync, mount, tick, unmount, type Component } from "svelte";
import { describe, expect, it, vi } from "vitest";
import type { DocumentTree } from "$lib/bindings/DocumentTree";
import { indexedDocument } from "$lib/testing/documents";

const shell = vi.hoisted(() => ({ invoke: vi.fn() }));
vi.mock("@tauri-apps/api/core", () => ({ invoke: shell.invoke, Channel: class {} }));

const { default: RunAnswer } = await import("./RunAnswer.svelte");
const { default: SourceViewer } = await import("./SourceViewer.svelte");
const { app } = await import("$lib/stores/app.svelte");
const { runCitations } = await import("$lib/runs");
const { expectInert, expectVisible, HOSTILE, HOSTILE_ANSWER, HOSTILE_PAYLOADS, hostileRun } = await import(
  "$lib/testing/hostile"
);

function show<Props extends Record<string, any>>(component: Component<Props>, props: Props) {
  const target = document.body.appendChild(document.createElement("div"));
  const instance = mount(component, { target, props });
  flushSync();
  return {
    target,
    destroy: () => {
      unmount(instance);
      target.remove();
    },
  };
}

describe("a hostile answer", () => {
  it("streams as plain text", () => {
    const { target, destroy } = show(RunAnswer, { status: "running", record: null, liveText: HOSTILE_ANSWER });
    expectInert(target);
    expectVisible(target, HOSTILE_PAYLOADS);
    destroy();
  });

  it("renders inert once stored, with its sources, its error and a working citation", () => {
    const run = hostileRun();
    const { target, destroy } = show(RunAnswer, { status: run.status, record: run });
    expectInert(target);
    expectVisible(target.querySelector('[data-testid="answer"]')!, HOSTILE_PAYLOADS);
    expectVisible(target.querySelector(".citations")!);
    expectVisible(target.querySelector(".error-notice")!);
    target.querySelector<HTMLButtonElement>("button.cite")!.click();
    expect(app.source?.heading_path).toBe(HOSTILE);
    destroy();
  });
});

describe("an answer cut off at its token limit", () => {
  it("is shown as written, with a cut-off mark saying the limit", () => {
    const run = { ...hostileRun(), status: "done" as const, error: null, cut_off: { step: "answer", max_tokens: 64 } };
    const { target, destroy } = show(RunAnswer, { status: run.status, record: run });
    expectVisible(target.querySelector('[data-testid="answer"]')!, HOSTILE_PAYLOADS);
    expect(target.querySelector('[data-testid="cut-off"]')?.textContent).toContain("limit of 64 tokens");
    expect(target.querySelector(".error-notice")).toBeNull();
    destroy();
  });

  it("is not marked when the answer finished", () => {
    const run = { ...hostileRun(), cut_off: null };
    const { target, destroy } = show(RunAnswer, { status: run.status, record: run });
    expect(target.querySelector('[data-testid="cut-off"]')).toBeNull();
    destroy();
  });
});

describe("a hostile document in the source viewer", () => {
  it("shows its title, headings and text as text", async () => {
    Element.prototype.scrollIntoView = () => {};
    const [citation] = runCitations(hostileRun());
    const tree: DocumentTree = {
      document: indexedDocument("/notes/hostile.md", "markdown", HOSTILE),
      tree: {
        nodes: [
          { parent: null, kind: "structure", depth: 0, text: HOSTILE, span: { start: 0, end: 10, page: null } },
          { parent: 0, kind: "content", depth: 1, text: HOSTILE, span: { start: 0, end: 10, page: null } },
        ],
      },
    };
    // The tree; the note's links are the source viewer's own tests'.
    shell.invoke.mockImplementation(async (command: string) => {
      if (command === "document_tree") return tree;
      throw { code: "internal", message: `unexpected ${command}`, details: null };
    });
    const { target, destroy } = show(SourceViewer, { target: citation, onClose: () => {} });
    await tick();
    await Promise.resolve();
    flushSync();
    expect(target.querySelector('[data-testid="source-highlight"]')).not.toBeNull();
    expectInert(target);
    for (const part of target.querySelectorAll("h2, .heading-path, .document p")) expectVisible(part);
    destroy();
  });
});
