import { flushSync } from "svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SourceTarget } from "$lib/source";
import type { TraceProps } from "./registry";
import Rdr2Trace from "./Rdr2Trace.svelte";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import { passage, rdr2Trace, render, text } from "./testing";

const routes = (root: Element) => [...root.querySelectorAll<HTMLElement>('[data-testid="rdr2-route"]')];
const nodes = (route: Element) => [...route.querySelectorAll<HTMLElement>('[data-testid="rdr2-node"]')];
const node = (route: Element, id: number) =>
  route.querySelector<HTMLElement>(`[data-testid="rdr2-node"][data-id="${id}"]`)!;
// A node's own marks, not those of the nodes nested under it.
const marks = (route: Element, id: number) => [...node(route, id).querySelectorAll(":scope > .node .mark")].map(text);
const button = (root: Element, label: string) =>
  [...root.querySelectorAll<HTMLButtonElement>("button")].find((b) => text(b) === label)!;

function slide(route: Element, step: number) {
  const slider = route.querySelector<HTMLInputElement>('[data-testid="rdr2-step"]')!;
  slider.value = String(step);
  slider.dispatchEvent(new Event("input", { bubbles: true }));
  flushSync();
}

function click(el: HTMLElement) {
  el.click();
  flushSync();
}

afterEach(() => {
  vi.useRealTimers();
});

describe("Rdr2Trace", () => {
  it("draws each route's tree with every node, its id and its depth", () => {
    const { target, destroy } = render(Rdr2Trace, { trace: rdr2Trace() });
    expect(text(target.querySelector(".facts"))).toContain("Heading openings per document 5");
    expect(text(target.querySelector(".facts"))).toContain("Routes 2 (one per document)");
    const [notes, book] = routes(target);
    expect(text(notes.querySelector("h4"))).toBe("Smart pointers");
    expect(text(notes.querySelector("button.file"))).toBe("smart-pointers.md");
    expect(notes.dataset.outcome).toBe("selected");

    const drawn = nodes(notes);
    expect(drawn.map((n) => Number(n.dataset.id))).toEqual([0, 1, 2, 3, 4, 5]);
    const tree = notes.querySelector("ul.tree")!;
    // Nested lists indent each node one level per depth.
    const levels = drawn.map((n) => {
      let level = 0;
      for (let el = n.parentElement; el && el !== tree.parentElement; el = el.parentElement) {
        if (el.tagName === "UL") level++;
      }
      return level - 1;
    });
    expect(levels).toEqual([0, 1, 2, 2, 3, 1]);
    expect(text(node(notes, 3).querySelector(":scope > .node"))).toMatch(/^3: Threads/);
    expect(node(notes, 3).querySelector(":scope > .node strong")).not.toBeNull();
    expect(text(node(notes, 4).querySelector(":scope > .node .text"))).toBe(passage(2).text);
    expect(node(notes, 4).querySelector(":scope > .node strong")).toBeNull();
    expect(nodes(book)).toHaveLength(3);
    destroy();
  });

  it("marks what the router was shown and did at the chosen step", () => {
    const { target, destroy } = render(Rdr2Trace, { trace: rdr2Trace() });
    const [route] = routes(target);
    // A finished route opens on its last step.
    expect(text(route.querySelector(".count"))).toBe("Step 2 of 2");
    expect(marks(route, 2)).toEqual(["retrieved", "selected"]);
    expect(marks(route, 3)).toEqual([]);
    expect(marks(route, 4)).toEqual(["in view", "selected"]);
    expect(marks(route, 1)).toEqual(["collapsed"]);
    expect(node(route, 2).querySelector(".node")!.classList.contains("out")).toBe(true);

    slide(route, 1);
    expect(text(route.querySelector(".count"))).toBe("Step 1 of 2");
    expect(marks(route, 2)).toEqual(["retrieved", "in view", "selected"]);
    expect(marks(route, 3)).toEqual(["opened"]);
    expect(marks(route, 5)).toEqual(["collapsed"]);
    expect(marks(route, 1)).toEqual([]);
    expect(marks(route, 4)).toEqual([]);
    expect(node(route, 4).querySelector(".node")!.classList.contains("out")).toBe(true);
    expect(button(route, "Previous").disabled).toBe(true);

    click(button(route, "Next"));
    expect(text(route.querySelector(".count"))).toBe("Step 2 of 2");
    expect(button(route, "Next").disabled).toBe(true);
    destroy();
  });

  it("plays the route one step at a time and stops at the end", () => {
    vi.useFakeTimers();
    const { target, destroy } = render(Rdr2Trace, { trace: rdr2Trace() });
    const [route, book] = routes(target);
    expect(button(book, "Play").disabled).toBe(true);

    // From the last step, Play starts over.
    click(button(route, "Play"));
    expect(text(route.querySelector(".count"))).toBe("Step 1 of 2");
    expect(button(route, "Pause")).toBeDefined();
    vi.advanceTimersByTime(1199);
    flushSync();
    expect(text(route.querySelector(".count"))).toBe("Step 1 of 2");
    vi.advanceTimersByTime(1);
    flushSync();
    expect(text(route.querySelector(".count"))).toBe("Step 2 of 2");
    expect(button(route, "Play")).toBeDefined();
    expect(vi.getTimerCount()).toBe(0);

    click(button(route, "Play"));
    expect(vi.getTimerCount()).toBe(1);
    destroy();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("shows the step's actions, the ignored parts of the reply and the reply itself", () => {
    const { target, destroy } = render(Rdr2Trace, { trace: rdr2Trace() });
    const [route, book] = routes(target);
    const detail = () => route.querySelector('[data-testid="rdr2-step-detail"]')!;
    expect([...detail().querySelectorAll(".chip")].map(text)).toEqual(["answer 4"]);
    expect(detail().querySelector(".ignored")).toBeNull();
    expect(text(detail().querySelector(".fit"))).toBe("1 passage shortened and 2 nodes left out to fit the budget");

    slide(route, 1);
    expect([...detail().querySelectorAll(".chip")].map(text)).toEqual(["answer 2", "expand 3"]);
    const ignored = detail().querySelector(".ignored.warning");
    expect(text(ignored)).toBe("[ANSWER] 1: node 1 is a heading; only passages can be selected");
    expect(detail().querySelector(".fit")).toBeNull();
    const reply = detail().querySelector<HTMLDetailsElement>("details.reply")!;
    expect(reply.open).toBe(false);
    expect(reply.querySelector("pre")?.textContent).toBe("[ANSWER] 2\n[EXPAND] 3\n[ANSWER] 1");

    const refusal = book.querySelector('[data-testid="rdr2-step-detail"]')!;
    expect([...refusal.querySelectorAll(".chip")].map(text)).toEqual(["refuse"]);
    expect(refusal.querySelector("pre")?.textContent).toBe("Cannot answer");
    destroy();
  });

  it("lists what each route gave the reader beside its tree", () => {
    const { target, destroy } = render(Rdr2Trace, { trace: rdr2Trace() });
    const [route, book] = routes(target);
    expect(text(route.querySelector('[data-testid="rdr2-outcome"]'))).toBe("Selected");
    const chosen = route.querySelector('[data-testid="rdr2-chosen"]')!;
    expect(chosen.parentElement).toBe(route.querySelector(".tree")!.parentElement!.parentElement);
    expect([...chosen.querySelectorAll("li")].map(text)).toEqual([`2: ${passage(1).text}`, `4: ${passage(2).text}`]);
    expect(text(book.querySelector('[data-testid="rdr2-outcome"]'))).toBe("Refused");
    expect(text(book.querySelector('[data-testid="rdr2-chosen"]'))).toContain("cannot answer the question");
    destroy();
  });

  it("draws a route that fell back before routing, with zero steps, from its notes", () => {
    const trace = rdr2Trace();
    const why = "the document was removed after it was retrieved; its retrieved passages were used";
    trace.routes[1] = {
      ...trace.routes[1],
      title: "",
      nodes: [],
      hits: [],
      steps: [],
      outcome: "fell-back",
      notes: [why],
    };
    const { target, destroy } = render(Rdr2Trace, { trace });
    const book = routes(target)[1];
    expect(text(book.querySelector("h4"))).toBe("rust-book.pdf");
    expect(text(book.querySelector('[data-testid="rdr2-outcome"]'))).toBe("Fell back to retrieved passages");
    expect(book.querySelector('[data-testid="rdr2-step"]')).toBeNull();
    expect(book.querySelector(".tree")).toBeNull();
    expect(text(book.querySelector('[aria-label="Notes on this route"]'))).toBe(why);
    const chosen = book.querySelector('[data-testid="rdr2-chosen"]')!;
    expect(text(chosen)).toContain("retrieved passages");
    expect([...chosen.querySelectorAll("li")].map(text)).toEqual([`#2 ${passage(3).text}`]);
    destroy();
  });

  it("shows routes still routing and the reader's passages as pending during a live run", () => {
    const trace = rdr2Trace({ passages: [] });
    const [notes, book] = trace.routes;
    trace.routes[0] = { ...notes, steps: notes.steps.slice(0, 1), selected: [2], outcome: "routing" };
    trace.routes[1] = { ...book, title: "", nodes: [], hits: [], steps: [], selected: [], outcome: "routing" };
    const live = render(Rdr2Trace, { trace, running: true });
    const [routing, waiting] = routes(live.target);
    expect(text(routing.querySelector('[data-testid="rdr2-outcome"]'))).toBe("Routing…");
    expect(text(routing.querySelector(".count"))).toBe("Step 1 of 1");
    expect(text(routing.querySelector(".pending.working"))).toBe("Step 2: waiting for the router…");
    expect(marks(routing, 2)).toEqual(["retrieved", "in view", "selected"]);
    const chosen = routing.querySelectorAll('[data-testid="rdr2-chosen"] li');
    expect([...chosen].map(text)).toEqual([`2: ${passage(1).text}`]);
    expect(text(waiting.querySelector(".pending.working"))).toBe("Waiting for the router…");
    expect(text(waiting.querySelector('[data-testid="rdr2-chosen"]'))).toContain("Nothing selected yet.");
    expect(text(live.target.querySelector('[data-testid="rdr2-reader"] .pending.working'))).toBe(
      "Waiting for the routes to finish…",
    );
    live.destroy();

    const ended = render(Rdr2Trace, { trace });
    expect(routes(ended.target).map((r) => text(r.querySelector('[data-testid="rdr2-outcome"]')))).toEqual([
      "Unfinished",
      "Unfinished",
    ]);
    expect(ended.target.querySelector(".working")).toBeNull();
    expect(text(ended.target.querySelector('[data-testid="rdr2-reader"]'))).toContain("No passage reached the reader.");
    ended.destroy();
  });

  it("opens the reader's passages and the routed documents, and marks the cited ones", () => {
    const opened: SourceTarget[] = [];
    const trace = rdr2Trace({ unknown_citations: [7], notes: ["1 selected passages did not fit the reader's budget"] });
    const { target, destroy } = render(Rdr2Trace, {
      trace,
      run: { citations: [passage(2)] } as unknown as TraceProps["run"],
      onCite: (t) => opened.push(t),
    });
    const reader = target.querySelector('[data-testid="rdr2-reader"]')!;
    const items = reader.querySelectorAll(".passages li");
    expect([...items].map((li) => li.classList.contains("cited"))).toEqual([false, true]);
    items[1].querySelector("button")?.click();
    expect(opened).toEqual([trace.passages[1]]);
    routes(target)[1].querySelector<HTMLButtonElement>("button.file")!.click();
    expect(opened[1]).toEqual({ path: "/books/rust-book.pdf" });
    expect(text(reader.querySelector('[aria-label="Notes on the reader\'s passages"]'))).toContain("did not fit");
    expect(text(target.querySelector(".warning:not(.ignored)"))).toContain("[7]");
    destroy();
  });

  it("keeps document and model text inert wherever it appears", () => {
    const trace = rdr2Trace({
      passages: [passage(1, { text: HOSTILE, heading_path: HOSTILE, path: HOSTILE })],
      notes: [HOSTILE],
    });
    const [route] = trace.routes;
    route.title = HOSTILE;
    route.path = HOSTILE;
    route.notes = [HOSTILE];
    route.nodes = route.nodes.map((n) => ({ ...n, text: HOSTILE }));
    route.steps[1] = {
      ...route.steps[1],
      reply: HOSTILE,
      ignored: [{ text: HOSTILE, reason: HOSTILE }],
    };
    trace.routes[1] = { ...trace.routes[1], outcome: "fell-back" };
    trace.retrieved[1].text = HOSTILE;
    const { target, destroy } = render(Rdr2Trace, { trace, running: true });
    for (const d of target.querySelectorAll("details")) d.open = true;
    expectInert(target);
    const hostile = routes(target)[0];
    expectVisible(hostile.querySelector("h4")!);
    expect(hostile.querySelector(".reply pre")?.textContent).toBe(HOSTILE);
    expectVisible(hostile.querySelector(".ignored")!);
    expect(text(node(hostile, 2))).toContain("<script>");
    expect(text(routes(target)[1].querySelector('[data-testid="rdr2-chosen"]'))).toContain("<script>");
    destroy();
  });

  it("shows the links its retriever followed above the routes, and nothing when it only searched", () => {
    const trace = rdr2Trace();
    trace.retrieval = [
      { retriever: "links", query: "Rc", searched: 1, followed: [{ from: 1, to: 2, written: "Drop" }], notes: [] },
    ];
    const linked = render(Rdr2Trace, { trace });
    const part = linked.target.querySelector('[data-testid="links-followed"]');
    expect(part).not.toBeNull();
    expect([...part!.querySelectorAll("li")].map(text)).toEqual(["[1] links to [2] by [[Drop]]"]);
    // Above the routes: the links decided which documents were routed.
    const first = routes(linked.target)[0];
    expect(part!.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    linked.destroy();

    const searched = render(Rdr2Trace, { trace: rdr2Trace() });
    expect(searched.target.querySelector('[data-testid="links-followed"]')).toBeNull();
    searched.destroy();
  });
});

