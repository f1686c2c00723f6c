import { describe, expect, it } from "vitest";
import type { SourceTarget } from "$lib/source";
import ActiveRagTrace from "./ActiveRagTrace.svelte";
import CrpRagTrace from "./CrpRagTrace.svelte";
import PagerTrace from "./PagerTrace.svelte";
import VanillaRagTrace from "./VanillaRagTrace.svelte";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import {
  activeRagTrace,
  crpRagTrace,
  CRP_QUESTION,
  fact,
  fire,
  gainWalkPart,
  pagerOverGainWalkTrace,
  render,
  routedFor,
  text,
  vanillaRagOverRoutingTrace,
  vanillaRagTrace,
  walkedFor,
} from "./testing";

const parts = (root: Element) => [...root.querySelectorAll<HTMLDetailsElement>('[data-testid="retrieval-part"]')];
const heading = (part: Element) => text(part.querySelector("summary h4"));
const chunks = (part: Element) =>
  [...part.querySelectorAll<SVGGElement>('[data-testid="ig2rag-node"]')].map((n) => Number(n.dataset.chunk));

describe("RetrievalParts", () => {
  it("draws nothing for a method whose retriever was a search", () => {
    for (const retrieval of [undefined, []]) {
      const { target, destroy } = render(VanillaRagTrace, { trace: vanillaRagTrace({ retrieval }) });
      expect(target.querySelector('[data-testid="retrieval-parts"]')).toBeNull();
      expect(fact(target, "Mode")).toBe("hybrid");
      destroy();
    }
  });

  it("draws PAGER's walks, one per sub-query, the first open and the rest folded, before the page", () => {
    const { target, destroy } = render(PagerTrace, { trace: pagerOverGainWalkTrace() });
    const [first, second] = parts(target);
    expect(parts(target)).toHaveLength(2);
    expect(heading(first)).toBe("Retrieved by the gain walk — for “Rc reference counting single thread”");
    expect(heading(second)).toBe("Retrieved by the gain walk — for “Arc atomic reference count threads”");
    expect([first.open, second.open]).toEqual([true, false]);
    expect(first.compareDocumentPosition(target.querySelector('[data-testid="pager-page"]')!)).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );

    expect(chunks(first)).toEqual([101, 102, 103, 104, 105, 106]);
    expect(chunks(second)).toEqual([103, 105]);
    expect(fact(second, "Seeds")).toBe("1 of h = 3, the chunks most similar to the question");
    expect(text(second.querySelector('[aria-label="Notes on the walk"]'))).toBe("the walk reached fewer chunks than k");
    expect(first.querySelector('[aria-label="Notes on the walk"]')).toBeNull();
    destroy();
  });

  it("numbers a walk's nodes by its own ranking and opens none of the method's passages", () => {
    const { target, destroy } = render(PagerTrace, { trace: pagerOverGainWalkTrace() });
    const second = parts(target)[1];
    const book = second.querySelector<SVGGElement>('[data-testid="ig2rag-node"][data-chunk="103"]')!;
    // The page's pool numbers the book [3]; this walk ranked it first.
    expect(text(book.querySelector("text.number"))).toBe("1");
    expect(book.getAttribute("aria-label")).toBe("rust-book.pdf (seed, passage 1 of this walk), PageRank mass 0.140");
    fire(book, "focus");
    const detail = second.querySelector('[data-testid="ig2rag-detail"]')!;
    expect(text(detail)).toContain("rust-book.pdf");
    expect(detail.querySelector("button")).toBeNull();
    expect(text(second.querySelector(".legend"))).toContain("passed on, numbered by its rank in this walk");
    destroy();
  });

  it("draws vanilla-rag's routing before its passages and names the retriever in its settings", () => {
    const opened: SourceTarget[] = [];
    const { target, destroy } = render(VanillaRagTrace, {
      trace: vanillaRagOverRoutingTrace(),
      onCite: (t) => opened.push(t),
    });
    expect(fact(target, "Mode")).toBe("RDR² routing");
    const [part] = parts(target);
    expect(parts(target)).toHaveLength(1);
    expect(part.open).toBe(true);
    expect(part.dataset.retriever).toBe("rdr2");
    expect(heading(part)).toBe("Routed by RDR² — for “How does Rc differ from Arc?”");
    const routes = [...part.querySelectorAll('[data-testid="rdr2-route"]')];
    expect(routes.map((r) => text(r.querySelector("h4")))).toEqual(["Smart pointers", "The Rust Programming Language"]);
    expect(fact(part, "Variant")).toMatch(/^full/);
    expect(text(part.querySelector('[aria-label="Notes on the routing"]'))).toContain("did not fit");
    expect(part.compareDocumentPosition(target.querySelector(".passages")!)).toBe(Node.DOCUMENT_POSITION_FOLLOWING);
    routes[1].querySelector<HTMLButtonElement>("button.file")!.click();
    expect(opened).toEqual([{ path: "/books/rust-book.pdf" }]);
    destroy();
  });

  it("names the gain walk as vanilla-rag's mode, and leaves out the query routing stored without one", () => {
    const walked = render(VanillaRagTrace, {
      trace: vanillaRagTrace({ mode: "ig2rag", retrieval: [walkedFor("Rc and Arc")] }),
    });
    expect(fact(walked.target, "Mode")).toBe("gain walk (iG²RAG)");
    expect(heading(parts(walked.target)[0])).toBe("Retrieved by the gain walk — for “Rc and Arc”");
    walked.destroy();

    const old = render(VanillaRagTrace, { trace: vanillaRagTrace({ mode: "rdr2", retrieval: [routedFor("")] }) });
    expect(heading(parts(old.target)[0])).toBe("Routed by RDR²");
    old.destroy();
  });

  it("lists the links the links retriever followed, from passage to passage", () => {
    const followed = render(VanillaRagTrace, {
      trace: vanillaRagTrace({
        mode: "links",
        retrieval: [
          {
            retriever: "links",
            query: "Rc",
            searched: 2,
            followed: [
              { from: 1, to: 3, written: "Deref Trait" },
              { from: 2, to: 4, written: `Drop#${HOSTILE}` },
            ],
            notes: [],
          },
        ],
      }),
    });
    const [part] = parts(followed.target);
    expect(fact(followed.target, "Mode")).toBe("hybrid, then the sections its passages link to");
    expect(heading(part)).toBe("Found by following links — for “Rc”");
    expect(fact(part, "Reached by a link")).toBe("2");
    const links = [...part.querySelectorAll('[data-testid="links-followed"] li')].map(text);
    expect(links[0]).toBe("[1] links to [3] by [[Deref Trait]]");
    expect(links[1]).toContain("[2] links to [4] by [[Drop#");
    expectInert(followed.target);
    followed.destroy();

    const none = render(VanillaRagTrace, {
      trace: vanillaRagTrace({
        mode: "links",
        retrieval: [{ retriever: "links", query: "Rc", searched: 3, followed: [], notes: ["no links"] }],
      }),
    });
    expect(none.target.querySelector('[data-testid="links-followed"]')).toBeNull();
    expect(text(none.target.querySelector('[aria-label="Notes on the links"]'))).toBe("no links");
    none.destroy();
  });

  it("draws ActiveRAG's and CRP-RAG's retrieval before their own steps", () => {
    const active = render(ActiveRagTrace, { trace: activeRagTrace({ retrieval: [walkedFor("Rc Arc threads")] }) });
    const [walk] = parts(active.target);
    expect(heading(walk)).toBe("Retrieved by the gain walk — for “Rc Arc threads”");
    expect(chunks(walk)).toHaveLength(6);
    expect(walk.compareDocumentPosition(active.target.querySelector('[data-testid="activerag-agents"]')!)).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );
    active.destroy();

    const steps = crpRagTrace().nodes.slice(1, 3).map((n) => n.text);
    const crp = render(CrpRagTrace, { trace: crpRagTrace({ retrieval: steps.map((s) => routedFor(s)) }) });
    const routed = parts(crp.target);
    expect(routed.map(heading)).toEqual(steps.map((s) => `Routed by RDR² — for “${s}”`));
    expect(routed.map((p) => p.open)).toEqual([true, false]);
    expect(routed[0].compareDocumentPosition(crp.target.querySelector('[data-testid="crp-rag-graph"]')!)).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );
    expect(text(crp.target)).toContain(CRP_QUESTION);
    crp.destroy();
  });

  it("keeps queries, node labels and route text inert", () => {
    const nodes = gainWalkPart().nodes.map((n) => ({ ...n, label: HOSTILE }));
    const trace = pagerOverGainWalkTrace();
    trace.retrieval = [walkedFor(HOSTILE, { nodes, notes: [HOSTILE] }), routedFor(HOSTILE, { notes: [HOSTILE] })];
    const { target, destroy } = render(PagerTrace, { trace });
    for (const d of target.querySelectorAll("details")) d.open = true;
    expectInert(target);
    for (const part of parts(target)) expectVisible(part.querySelector("summary")!);
    const node = parts(target)[0].querySelector('[data-testid="ig2rag-node"]');
    expect(node?.getAttribute("aria-label")).toContain("<script>");
    destroy();
  });
});
