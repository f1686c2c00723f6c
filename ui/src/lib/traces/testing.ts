// For the renderer tests: traces as the engine writes them, typed by the
// generated bindings so a change on the Rust side fails `npm run check` here
// before a renderer silently draws the wrong thing; and helpers to mount a
// renderer, read what it drew and act on it.
import { flushSync, mount, unmount } from "svelte";
import type { GainWalkPart } from "$lib/bindings/GainWalkPart";
import type { Passage } from "$lib/bindings/Passage";
import type { RetrievalPart } from "$lib/bindings/RetrievalPart";
import type { RoutedPart } from "$lib/bindings/RoutedPart";
import type { Trace } from "$lib/bindings/Trace";
import type { TraceProps, TraceRenderer } from "./registry";

export type VanillaRagFixture = Extract<Trace, { method: "vanilla-rag" }>;
export type PagerFixture = Extract<Trace, { method: "pager" }>;
export type ActiveRagFixture = Extract<Trace, { method: "activerag" }>;
export type Rdr2Fixture = Extract<Trace, { method: "rdr2" }>;
export type Ig2RagFixture = Extract<Trace, { method: "ig2rag" }>;
export type CrpRagFixture = Extract<Trace, { method: "crp-rag" }>;
export type WholeDocumentFixture = Extract<Trace, { method: "whole-document" }>;

const PASSAGES: Omit<Passage, "number" | "chunk_id">[] = [
  {
    path: "/notes/rust/smart-pointers.md",
    heading_path: "Smart pointers > Rc",
    span_start: 120,
    span_end: 410,
    page: null,
    score: 0.91,
    text: "Rc<T> keeps a count of the owners of a value and frees it when the last owner is dropped.",
  },
  {
    path: "/notes/rust/smart-pointers.md",
    heading_path: "Smart pointers > Rc > Threads",
    span_start: 410,
    span_end: 620,
    page: null,
    score: 0.74,
    text: "Rc<T> is not Send: its count is updated without atomics, so it must stay on one thread.",
  },
  {
    path: "/books/rust-book.pdf",
    heading_path: "",
    span_start: 0,
    span_end: 240,
    page: 318,
    score: 0.69,
    text: "Arc<T> is an atomically reference-counted pointer, safe to share between threads at a small cost.",
  },
];

export function passage(number: number, overrides: Partial<Passage> = {}): Passage {
  return { number, chunk_id: 100 + number, ...PASSAGES[(number - 1) % PASSAGES.length], ...overrides };
}

const TITLE = "How does Rc differ from Arc?";

/** A vanilla-rag run that retrieved all three passages. */
export function vanillaRagTrace(overrides: Partial<VanillaRagFixture> = {}): VanillaRagFixture {
  return {
    method: "vanilla-rag",
    query: TITLE,
    mode: "hybrid",
    k: 3,
    passages: [passage(1), passage(2), passage(3)],
    unknown_citations: [],
    ...overrides,
  };
}
const HEADINGS = ["What Rc does", "What Arc adds", "When to choose which"];
const BODIES = [
  "Rc counts the owners of a value and frees it with the last one [1]. It cannot cross threads [2].",
  "Arc does the same with **atomic** counts, so it can be shared between threads [3].",
];

/** An iterative PAGER run caught after two of its three slots were filled. */
export function pagerTrace(overrides: Partial<PagerFixture> = {}): PagerFixture {
  const sections = HEADINGS.map((heading, i) => ({ heading, body: BODIES[i] ?? null }));
  return {
    method: "pager",
    variant: "iterative",
    slots_max: 5,
    k: 2,
    reasoning: "The question compares two pointers: say what each does, then how to choose.",
    outline: { title: TITLE, sections: HEADINGS.map((heading) => ({ heading, body: null })) },
    outline_notes: ["dropped a section that repeated the title"],
    steps: [
      {
        slot: 0,
        heading: HEADINGS[0],
        sub_query: "Rc reference counting single thread",
        sources: [1, 2],
        text: BODIES[0],
        notes: [],
        failed: false,
        overlap: null,
        sufficient: null,
        page_after: `# ${TITLE}\n\n## ${HEADINGS[0]}\n${BODIES[0]}\n`,
      },
      {
        slot: 1,
        heading: HEADINGS[1],
        sub_query: "Arc atomic reference count threads",
        sources: [3, 2],
        text: BODIES[1],
        notes: ["the fill reply repeated its heading; the repeat was removed"],
        failed: false,
        overlap: 1 / 3,
        sufficient: null,
        page_after: `# ${TITLE}\n\n## ${HEADINGS[0]}\n${BODIES[0]}\n\n## ${HEADINGS[1]}\n${BODIES[1]}\n`,
      },
    ],
    page: { title: TITLE, sections },
    passages: [passage(1), passage(2), passage(3)],
    unknown_citations: [],
    ...overrides,
  };
}

/** An ActiveRAG run with all three agents done. */
export function activeRagTrace(overrides: Partial<ActiveRagFixture> = {}): ActiveRagFixture {
  return {
    method: "activerag",
    variant: "reflection",
    agents: "all",
    k: 3,
    passages: [passage(1), passage(2), passage(3)],
    self_inquiry: "Both count references, and I believe Rc is the thread-safe one.\nAnswer: Rc",
    assimilation: "Rc is not Send and must stay on one thread [2]. Arc uses atomic counts [3].",
    accommodation: "The first attempt had it backwards: Arc is the thread-safe one [3].\nAnswer: Arc",
    answer_line_missing: false,
    unknown_citations: [],
    notes: [],
    ...overrides,
  };
}

/**
 * A full RDR2 routing over two documents: the notes were routed in two
 * steps (select a passage and open a heading, then select what it held),
 * the book was refused.
 */
export function routedPart(overrides: Partial<RoutedPart> = {}): RoutedPart {
  const [rc, send, arc] = PASSAGES.map((p) => p.text);
  return {
    query: TITLE,
    variant: "full",
    k: 2,
    expand_iter: 5,
    budget_tokens: 1000,
    retrieved: [passage(1), { ...passage(3), number: 2 }],
    routes: [
      {
        path: "/notes/rust/smart-pointers.md",
        title: "Smart pointers",
        nodes: [
          { id: 0, parent: null, kind: "structure", depth: 0, text: "Smart pointers" },
          { id: 1, parent: 0, kind: "structure", depth: 1, text: "Rc" },
          { id: 2, parent: 1, kind: "content", depth: 2, text: rc },
          { id: 3, parent: 1, kind: "structure", depth: 2, text: "Threads" },
          { id: 4, parent: 3, kind: "content", depth: 3, text: send },
          { id: 5, parent: 0, kind: "structure", depth: 1, text: "Arc" },
        ],
        retrieved: [1],
        hits: [2],
        steps: [
          {
            visible: [2],
            collapsed: [3, 5],
            truncated: [],
            elided: 0,
            reply: "[ANSWER] 2\n[EXPAND] 3\n[ANSWER] 1",
            actions: [
              { kind: "answer", node: 2 },
              { kind: "expand", node: 3 },
            ],
            ignored: [{ text: "[ANSWER] 1", reason: "node 1 is a heading; only passages can be selected" }],
            refused: false,
          },
          {
            visible: [4],
            collapsed: [1, 5],
            truncated: [4],
            elided: 2,
            reply: "[ANSWER] 4",
            actions: [{ kind: "answer", node: 4 }],
            ignored: [],
            refused: false,
          },
        ],
        selected: [2, 4],
        outcome: "selected",
        notes: [],
      },
      {
        path: "/books/rust-book.pdf",
        title: "The Rust Programming Language",
        nodes: [
          { id: 0, parent: null, kind: "structure", depth: 0, text: "The Rust Programming Language" },
          { id: 1, parent: 0, kind: "structure", depth: 1, text: "Fearless concurrency" },
          { id: 2, parent: 1, kind: "content", depth: 2, text: arc },
        ],
        retrieved: [2],
        hits: [2],
        steps: [
          {
            visible: [2],
            collapsed: [],
            truncated: [],
            elided: 0,
            reply: "Cannot answer",
            actions: [],
            ignored: [],
            refused: true,
          },
        ],
        selected: [],
        outcome: "refused",
        notes: [],
      },
    ],
    notes: [],
    ...overrides,
  };
}

/** An RDR2 run whose reader was given the two passages the notes' route selected. */
export function rdr2Trace(overrides: Partial<Rdr2Fixture> = {}): Rdr2Fixture {
  return {
    method: "rdr2",
    ...routedPart(),
    passages: [passage(1), passage(2)],
    unknown_citations: [],
    refused: false,
    ...overrides,
  };
}

/**
 * A gain walk over a built coarse graph: three seeds (chunks 101, 103,
 * 104), the three passages the walk ranked highest (101, 102, 103; two of
 * them seeds) and two more nodes it reached, joined by edges of every class.
 */
export function gainWalkPart(overrides: Partial<GainWalkPart> = {}): GainWalkPart {
  return {
    query: TITLE,
    variant: "ig2rag",
    rubric: "coarse",
    h: 3,
    alpha: 0.3,
    k: 3,
    links: "off",
    coverage: { chunks: 412, scored: 408, failed: 2, edges: 2040 },
    seeds: [
      { chunk_id: 101, similarity: 0.82, weight: 0.36 },
      { chunk_id: 103, similarity: 0.74, weight: 0.33 },
      { chunk_id: 104, similarity: 0.69, weight: 0.31 },
    ],
    walk: { iterations: 23, converged: true, last_change: 8.1e-7, graph_nodes: 412, graph_edges: 2040, walk_ms: 3.4 },
    nodes: [
      { chunk_id: 101, label: "smart-pointers.md › Smart pointers > Rc", score: 0.31, seed: true, passage: 1 },
      { chunk_id: 102, label: "smart-pointers.md › Smart pointers > Rc > Threads", score: 0.22, seed: false, passage: 2 },
      { chunk_id: 103, label: "rust-book.pdf", score: 0.14, seed: true, passage: 3 },
      { chunk_id: 104, label: "smart-pointers.md › Smart pointers > Box", score: 0.08, seed: true, passage: null },
      { chunk_id: 105, label: "concurrency.md › Shared state > Mutex", score: 0.05, seed: false, passage: null },
      { chunk_id: 106, label: "smart-pointers.md › Smart pointers > RefCell", score: 0.02, seed: false, passage: null },
    ],
    edges: [
      { source: 101, target: 102, class: "novel", weight: 0.95, link: false },
      { source: 102, target: 101, class: "minor", weight: 0.4, link: false },
      { source: 101, target: 103, class: "significant", weight: 0.7, link: false },
      { source: 104, target: 102, class: "redundant", weight: 0.1, link: false },
      { source: 103, target: 105, class: "novel", weight: 0.95, link: false },
      { source: 104, target: 106, class: "minor", weight: 0.4, link: false },
    ],
    notes: [],
    ...overrides,
  };
}

/** An iG²RAG run that gave the model the three passages its walk ranked highest. */
export function ig2ragTrace(overrides: Partial<Ig2RagFixture> = {}): Ig2RagFixture {
  return {
    method: "ig2rag",
    ...gainWalkPart(),
    passages: [passage(1), passage(2), passage(3)],
    unknown_citations: [],
    ...overrides,
  };
}

/**
 * The iG²RAG run whose walk also followed the notes' links: the Rc notes
 * link to the book, beside the significant gain edge between them, and the
 * Mutex notes link to RefCell's, where no gain edge joins them. A link
 * weighs 0.7, added to a gain edge's weight beside it.
 */
export function linkedIg2ragTrace(overrides: Partial<Ig2RagFixture> = {}): Ig2RagFixture {
  const base = ig2ragTrace();
  return ig2ragTrace({
    links: "follow",
    edges: [
      ...base.edges.map((e) => (e.source === 101 && e.target === 103 ? { ...e, weight: e.weight + 0.7, link: true } : e)),
      { source: 105, target: 106, class: null, weight: 0.7, link: true },
    ],
    ...overrides,
  });
}

/** The gain walk's part of a trace that retrieved with it for `query`. */
export function walkedFor(query: string, overrides: Partial<GainWalkPart> = {}): RetrievalPart {
  return { retriever: "ig2rag", ...gainWalkPart({ query, ...overrides }) };
}

/** RDR2's routing's part of a trace that retrieved with it for `query`. */
export function routedFor(query: string, overrides: Partial<RoutedPart> = {}): RetrievalPart {
  return { retriever: "rdr2", ...routedPart({ query, ...overrides }) };
}

/**
 * The PAGER run over the gain walk: one walk per sub-query. The second
 * walk reached only the book and the Mutex notes and ranked the book
 * first, which the page's pool numbers [3].
 */
export function pagerOverGainWalkTrace(): PagerFixture {
  const [first, second] = pagerTrace().steps.map((s) => s.sub_query);
  const walk = gainWalkPart();
  return pagerTrace({
    retrieval: [
      walkedFor(first),
      walkedFor(second, {
        seeds: walk.seeds.filter((s) => s.chunk_id === 103),
        nodes: [
          { ...walk.nodes[2], passage: 1 },
          { ...walk.nodes[4], passage: 2 },
        ],
        edges: walk.edges.filter((e) => e.source === 103 && e.target === 105),
        notes: ["the walk reached fewer chunks than k"],
      }),
    ],
  });
}

/** The vanilla-rag run over RDR2's routing: the reader got what the notes' route selected. */
export function vanillaRagOverRoutingTrace(): VanillaRagFixture {
  return vanillaRagTrace({
    mode: "rdr2",
    k: 2,
    passages: [passage(1), passage(2)],
    retrieval: [routedFor(TITLE, { notes: ["1 selected passages did not fit the reader's budget of 1000 tokens"] })],
  });
}

const BANDS: [path: string, heading: string, text: string][] = [
  ["/wiki/letters-to-cleo.md", "Letters to Cleo", "Letters to Cleo is an American alternative rock band from Boston, Massachusetts, formed in 1990."],
  [
    "/wiki/letters-to-cleo.md",
    "Letters to Cleo > Members",
    "The band's members are Kay Hanley, Greg McKenna, Michael Eisenstein, Stacy Jones, Scott Riebling and Tom Polce.",
  ],
  ["/wiki/screaming-trees.md", "Screaming Trees", "Screaming Trees were an American rock band formed in Ellensburg, Washington, in 1985."],
  [
    "/wiki/screaming-trees.md",
    "Screaming Trees > Members",
    "The band's line-up was Mark Lanegan, Gary Lee Conner, Van Conner and Barrett Martin.",
  ],
];

/** One of the four passages the CRP-RAG fixture's steps retrieved, about the two bands. */
export function bandPassage(number: number): Passage {
  const [path, heading_path, text] = BANDS[(number - 1) % BANDS.length];
  return passage(number, { path, heading_path, text, span_start: 0, span_end: text.length, score: 0.9 - number * 0.05 });
}

export const CRP_QUESTION = "Which band has more members, Letters to Cleo or Screaming Trees?";

/**
 * A finished CRP-RAG run: three first steps (the second merged from two
 * near-identical ones), two final steps, one of them reached only through
 * an insufficient step, and the two paths through the sufficient ones.
 */
export function crpRagTrace(overrides: Partial<CrpRagFixture> = {}): CrpRagFixture {
  return {
    method: "crp-rag",
    variant: "crp-rag",
    k: 2,
    budget: { depth: 3, nodes: 8, branching: 3, paths: 2 },
    merge_threshold: 0.9,
    perplexity_threshold: 5,
    threshold_source: { kind: "calibrated", accuracy: 0.875, held_out_accuracy: 0.825 },
    nodes: [
      { id: 0, text: CRP_QUESTION, depth: 0, is_final: false, passages: [], knowledge: null, check: null },
      {
        id: 1,
        text: "How many members does Letters to Cleo have?",
        depth: 1,
        is_final: false,
        passages: [1, 2],
        knowledge:
          "Letters to Cleo is an alternative rock band from Boston [1]. Its members are Kay Hanley, Greg McKenna, Michael Eisenstein, Stacy Jones, Scott Riebling and Tom Polce: six people [2].",
        check: { test: "perplexity", reply: "Letters to Cleo has six members.", perplexity: 2.4137, sufficient: true },
      },
      {
        id: 2,
        text: "How many members did Screaming Trees have?",
        depth: 1,
        is_final: false,
        passages: [3, 4],
        knowledge:
          "Screaming Trees were a rock band from Ellensburg, Washington [3]. The line-up was Mark Lanegan, Gary Lee Conner, Van Conner and Barrett Martin: four people [4].",
        check: { test: "perplexity", reply: "Screaming Trees had four members.", perplexity: 1.8721, sufficient: true },
      },
      {
        id: 3,
        text: "Did either band change its line-up over the years?",
        depth: 1,
        is_final: false,
        passages: [2, 4],
        knowledge: "The documents list each band's members [2] [4] but say nothing about changes to the line-ups.",
        check: { test: "perplexity", reply: "It is not known.", perplexity: 8.731, sufficient: false },
      },
      {
        id: 4,
        text: "Compare Letters to Cleo's six members with Screaming Trees' four",
        depth: 2,
        is_final: true,
        passages: [2, 4],
        knowledge: "Letters to Cleo has six members [2]; Screaming Trees had four [4].",
        check: { test: "perplexity", reply: "Letters to Cleo, with six against four.", perplexity: 1.5213, sufficient: true },
      },
      {
        id: 5,
        text: "How many people have played in each band in all, counting former members?",
        depth: 2,
        is_final: true,
        passages: [1, 3],
        knowledge: "No document says who played in either band before its current line-up.",
        check: { test: "perplexity", reply: "Unknown.", perplexity: 11.2, sufficient: false },
      },
    ],
    edges: [
      { from: 0, to: 1 },
      { from: 0, to: 2 },
      { from: 0, to: 3 },
      { from: 1, to: 4 },
      { from: 2, to: 4 },
      { from: 3, to: 5 },
    ],
    merges: [
      {
        node: 2,
        texts: ["How many members did Screaming Trees have?", "Who were the members of Screaming Trees?"],
        similarity: 0.9312,
        identical: false,
      },
    ],
    stop: "all-final",
    paths: [
      {
        nodes: [0, 1, 4],
        results: [
          "Letters to Cleo has six members [2].",
          "Letters to Cleo has more members: six against Screaming Trees' four [2] [4].",
        ],
        answer: "Letters to Cleo has more members: six [2] against four [4].",
      },
      {
        nodes: [0, 2, 4],
        results: [
          "Screaming Trees had four members [4].",
          "Letters to Cleo, with six members [2], has more than Screaming Trees' four [4].",
        ],
        answer: "Letters to Cleo, with six members [2] to Screaming Trees' four [4].",
      },
    ],
    refused: false,
    passages: [1, 2, 3, 4].map(bandPassage),
    unknown_citations: [],
    notes: [],
    ...overrides,
  };
}

/**
 * A whole-document answer about the smart-pointer notes: the document's
 * summary kept from an earlier answer, two sections written now, and one
 * section left unwritten; the answer read headings down to level 1.
 */
export function wholeDocumentTrace(overrides: Partial<WholeDocumentFixture> = {}): WholeDocumentFixture {
  const path = "/notes/rust/smart-pointers.md";
  const section = (node: number, depth: number, heading_path: string, summary: string | null, kept: boolean, number: number | null) => ({
    node,
    depth,
    heading_path,
    span_start: node * 100,
    span_end: node * 100 + 90,
    page: null,
    pieces: 1,
    summary,
    kept,
    number,
  });
  return {
    method: "whole-document",
    path,
    title: "Smart pointers",
    sections: [
      section(0, 0, "Smart pointers", "Rc and Arc both count owners; only Arc may cross threads.", true, 1),
      section(1, 1, "Smart pointers > Rc", "Rc frees a value when its last owner is dropped.", false, 2),
      section(3, 2, "Smart pointers > Rc > Threads", "Rc is not Send.", false, null),
      section(5, 1, "Smart pointers > Arc", null, false, null),
    ],
    estimated_calls: 4,
    max_calls: 200,
    shown_depth: 1,
    passages: [
      passage(1, { path, heading_path: "Smart pointers", text: "Rc and Arc both count owners; only Arc may cross threads." }),
      passage(2, { path, heading_path: "Smart pointers > Rc", text: "Rc frees a value when its last owner is dropped." }),
    ],
    unknown_citations: [],
    ...overrides,
  };
}

export function render(component: TraceRenderer, props: TraceProps) {
  const target = document.createElement("div");
  const instance = mount(component, { target, props });
  flushSync();
  return { target, destroy: () => unmount(instance) };
}

/** An element's text with its white space folded, as it reads on screen. */
export const text = (el: Element | null | undefined) => el?.textContent?.replace(/\s+/g, " ").trim() ?? "";

/** The value of the trace's setting (a row of Facts) with this label. */
export const fact = (root: Element, label: string) => {
  const dt = [...root.querySelectorAll(".facts dt")].find((d) => text(d) === label);
  return text(dt?.nextElementSibling);
};

/** Dispatches an event as the browser would, bubbling or not, and lets the component update. */
export function fire(el: Element, type: string, init: KeyboardEventInit = {}) {
  const event = type.startsWith("key")
    ? new KeyboardEvent(type, { bubbles: true, cancelable: true, ...init })
    : new Event(type, { bubbles: type !== "mouseenter" && type !== "mouseleave" && type !== "focus" && type !== "blur" });
  el.dispatchEvent(event);
  flushSync();
}
