import { flushSync } from "svelte";
import { describe, expect, it } from "vitest";
import type { SourceTarget } from "$lib/source";
import CrpRagTrace from "./CrpRagTrace.svelte";
import type { TraceProps } from "./registry";
import { expectInert, expectVisible, HOSTILE } from "$lib/testing/hostile";
import { bandPassage, CRP_QUESTION, crpRagTrace, fact, fire, render, text } from "./testing";

const nodes = (root: Element) => [...root.querySelectorAll<SVGGElement>('[data-testid="crp-rag-node"]')];
const node = (root: Element, id: number) =>
  root.querySelector<SVGGElement>(`[data-testid="crp-rag-node"][data-id="${id}"]`)!;
const edges = (root: Element) => [...root.querySelectorAll<SVGPathElement>('[data-testid="crp-rag-edge"]')];
const edge = (root: Element, from: number, to: number) =>
  root.querySelector<SVGPathElement>(`[data-testid="crp-rag-edge"][data-from="${from}"][data-to="${to}"]`)!;
const detail = (root: Element) => root.querySelector<HTMLElement>('[data-testid="crp-rag-detail"]');
const ids = (els: Element[]) => els.map((el) => Number(el.getAttribute("data-id")));
const button = (root: Element, label: string) =>
  [...root.querySelectorAll<HTMLButtonElement>("button")].find((b) => text(b) === label)!;

function click(el: Element) {
  (el as HTMLElement).dispatchEvent(new MouseEvent("click", { bubbles: true }));
  flushSync();
}

describe("CrpRagTrace", () => {
  it("states the variant, the budget, the thresholds and why the graph stopped", () => {
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace() });
    expect(fact(target, "Variant")).toMatch(/^crp-rag \(the full method/);
    expect(fact(target, "Passages per step")).toBe("k = 2");
    expect(fact(target, "Budget")).toBe("3 rounds, 8 steps, 3 next steps per open step, 2 paths");
    expect(fact(target, "Merging")).toBe("new steps at least 0.90 similar become one (1 merge)");
    expect(fact(target, "Sufficiency")).toBe(
      "perplexity of the model's answer to a step below 5.00 (calibrated for this model: 88% of the probes sorted right, 83% held out)",
    );
    expect(fact(target, "Graph")).toBe("5 steps in 2 rounds, 6 edges");
    expect(fact(target, "Stopped")).toBe("every open step led to a final one");
    expect(target.querySelector('[data-testid="crp-rag-refused"]')).toBeNull();
    destroy();
  });

  it("draws the question and every step, coloured by sufficiency, with a legend", () => {
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace() });
    const svg = target.querySelector('[data-testid="crp-rag-graph"] svg')!;
    expect(svg.getAttribute("viewBox")).toMatch(/^0 0 \d+ \d+$/);
    expect(ids(nodes(target))).toEqual([0, 1, 2, 3, 4, 5]);
    const status = (id: number) => node(target, id).dataset.status;
    expect([0, 1, 2, 3, 4, 5].map(status)).toEqual([
      "question",
      "sufficient",
      "sufficient",
      "insufficient",
      "sufficient",
      "insufficient",
    ]);
    for (const n of nodes(target)) expect(n.classList.contains(n.dataset.status!)).toBe(true);
    expect(text(node(target, 0).querySelector("text.head"))).toBe("Question");
    const lines = (id: number) => [...node(target, id).querySelectorAll("text.label tspan")].map(text);
    expect(lines(0).join(" ")).toBe(CRP_QUESTION);
    expect(lines(1)).toEqual(["How many members does", "Letters to Cleo have?"]);
    expect(text(node(target, 1).querySelector("text.mark"))).toBe("✓ 2.41");
    expect(text(node(target, 3).querySelector("text.mark"))).toBe("✗ 8.73");
    expect(node(target, 3).getAttribute("aria-label")).toBe(
      "Step 3, round 1, insufficient (perplexity 8.73): Did either band change its line-up over the years?",
    );
    // Edges run from each step to the steps that follow it.
    expect(edges(target).map((e) => `${e.dataset.from}>${e.dataset.to}`)).toEqual(["0>1", "0>2", "0>3", "1>4", "2>4", "3>5"]);
    expect(text(edge(target, 2, 4).querySelector("title"))).toBe("Step 2 → Step 4");

    const legend = [...target.querySelectorAll<HTMLElement>('[data-testid="crp-rag-legend"]')];
    expect(legend.map((li) => li.dataset.kind)).toEqual([
      "question",
      "sufficient",
      "insufficient",
      "unchecked",
      "final",
      "merged",
      "path",
    ]);
    expect(text(legend[3])).toBe("not checked the run ended before its check");
    destroy();
  });

  it("marks final steps with a double border and merged steps as a stack", () => {
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace() });
    const finals = nodes(target).filter((n) => n.querySelector("rect.final-ring"));
    expect(ids(finals)).toEqual([4, 5]);
    const tags = (id: number) => [...node(target, id).querySelectorAll(".tag text")].map(text);
    for (const n of finals) expect(n.dataset.final).toBe("true");
    expect(tags(4)).toEqual(["final"]);
    expect(tags(5)).toEqual(["final"]);
    const merged = nodes(target).filter((n) => n.querySelector("rect.stack"));
    expect(ids(merged)).toEqual([2]);
    expect(node(target, 2).dataset.merged).toBe("true");
    expect(tags(2)).toEqual(["merged"]);
    expect(tags(1)).toEqual([]);
    expect(text(node(target, 2).querySelector("text.head"))).toBe("Step 2");
    expect(node(target, 2).getAttribute("aria-label")).toContain("merged");
    destroy();
  });

  it("highlights the selected paths, and one path alone when it is picked", () => {
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace() });
    const lit = () => ids(nodes(target).filter((n) => n.classList.contains("on-path")));
    const litEdges = () =>
      edges(target)
        .filter((e) => e.classList.contains("on-path"))
        .map((e) => `${e.dataset.from}>${e.dataset.to}`);
    const dimmed = () => ids(nodes(target).filter((n) => n.classList.contains("dim")));
    expect(lit()).toEqual([0, 1, 2, 4]);
    expect(litEdges()).toEqual(["0>1", "0>2", "1>4", "2>4"]);
    expect(node(target, 1).querySelector("rect.halo")).not.toBeNull();
    expect(node(target, 3).querySelector("rect.halo")).toBeNull();
    expect(dimmed()).toEqual([]);

    const picks = [...target.querySelectorAll<HTMLButtonElement>('[data-testid="crp-rag-path-pick"]')];
    expect(picks.map(text)).toEqual(["0 → 1 → 4", "0 → 2 → 4"]);
    fire(picks[1], "mouseenter");
    expect(lit()).toEqual([0, 2, 4]);
    expect(litEdges()).toEqual(["0>2", "2>4"]);
    expect(dimmed()).toEqual([1, 3, 5]);
    expect(edge(target, 0, 1).classList.contains("dim")).toBe(true);
    fire(picks[1], "mouseleave");
    expect(lit()).toEqual([0, 1, 2, 4]);

    click(picks[0]);
    expect(picks[0].getAttribute("aria-pressed")).toBe("true");
    expect(lit()).toEqual([0, 1, 4]);
    // The path's own button below the graph shows it too, and again shows them all.
    const paths = [...target.querySelectorAll<HTMLElement>('[data-testid="crp-rag-path"]')];
    const second = paths[1].querySelector<HTMLButtonElement>("header button")!;
    expect(text(second)).toBe("0 → 2 → 4");
    click(second);
    expect(lit()).toEqual([0, 2, 4]);
    expect(picks[1].getAttribute("aria-pressed")).toBe("true");
    click(button(target, "all"));
    expect(lit()).toEqual([0, 1, 2, 4]);
    expect(dimmed()).toEqual([]);
    destroy();
  });

  it("opens a step's knowledge, check and passages when it is clicked", () => {
    const opened: SourceTarget[] = [];
    const trace = crpRagTrace();
    const { target, destroy } = render(CrpRagTrace, { trace, onCite: (t) => opened.push(t) });
    expect(detail(target)).toBeNull();
    expect(text(target.querySelector(".hint"))).toMatch(/^Click a step/);

    click(node(target, 1));
    const panel = detail(target)!;
    expect(node(target, 1).getAttribute("aria-pressed")).toBe("true");
    expect(node(target, 1).classList.contains("selected")).toBe(true);
    expect(text(panel.querySelector("h5"))).toBe("Step 1");
    expect(text(panel.querySelector('[data-testid="crp-rag-detail-text"]'))).toBe("How many members does Letters to Cleo have?");
    const knowledge = panel.querySelector('[data-testid="crp-rag-knowledge"]')!;
    expect(text(knowledge)).toContain("Its members are Kay Hanley");
    // Citation markers in the knowledge open their passages.
    const cites = [...knowledge.querySelectorAll<HTMLButtonElement>("button.cite")];
    expect(cites.map(text)).toEqual(["1", "2"]);
    cites[1].click();
    expect(opened).toEqual([trace.passages[1]]);

    expect(text(panel.querySelector('[data-testid="crp-rag-perplexity"]'))).toBe("2.41 (below the threshold 5.00)");
    const verdict = panel.querySelector<HTMLElement>('[data-testid="crp-rag-verdict"]')!;
    expect(text(verdict)).toBe("sufficient");
    expect(verdict.dataset.sufficient).toBe("true");
    expect(text(panel.querySelector('[data-testid="crp-rag-check"]'))).toContain("Letters to Cleo has six members.");
    const retrieved = [...panel.querySelectorAll<HTMLButtonElement>('[data-testid="crp-rag-retrieved"] button')];
    expect(retrieved.map(text)).toEqual(["[1]", "[2]"]);
    retrieved[0].click();
    expect(opened[1]).toEqual(trace.passages[0]);
    expect(text(panel)).toContain("After Question");

    // Clicking the same step again closes it.
    click(node(target, 1));
    expect(detail(target)).toBeNull();
    destroy();
  });

  it("opens a step from the keyboard, shows an insufficient check and what a merge was made of", () => {
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace() });
    const step = node(target, 3);
    expect(step.getAttribute("tabindex")).toBe("0");
    expect(step.getAttribute("role")).toBe("button");
    fire(step, "focus");
    expect(step.classList.contains("lit")).toBe(true);
    expect(edge(target, 0, 3).classList.contains("lit")).toBe(true);
    expect(edge(target, 3, 5).classList.contains("lit")).toBe(true);
    expect(edge(target, 1, 4).classList.contains("lit")).toBe(false);
    fire(step, "keydown", { key: "Enter" });
    expect(text(detail(target)!.querySelector('[data-testid="crp-rag-perplexity"]'))).toBe(
      "8.73 (not below the threshold 5.00)",
    );
    expect(text(detail(target)!.querySelector('[data-testid="crp-rag-verdict"]'))).toBe("insufficient");
    expect(detail(target)!.classList.contains("insufficient")).toBe(true);
    fire(step, "keydown", { key: "Escape" });
    expect(detail(target)).toBeNull();

    fire(node(target, 2), "keydown", { key: " " });
    const merged = detail(target)!.querySelector('[data-testid="crp-rag-merged"]')!;
    expect(text(merged.querySelector("h6"))).toBe("Merged from 2 steps");
    expect([...merged.querySelectorAll("li")].map(text)).toEqual([
      "How many members did Screaming Trees have?",
      "Who were the members of Screaming Trees?",
    ]);
    expect(text(merged)).toContain("at least 0.93 similar");

    // A final step follows two; either one opens from its details.
    fire(node(target, 4), "keydown", { key: "Enter" });
    expect(text(detail(target)!.querySelector("header"))).toMatch(/^Step 4 round 2 final sufficient/);
    click(button(detail(target)!, "Step 2"));
    expect(Number(detail(target)!.dataset.id)).toBe(2);
    click(button(detail(target)!, "Close"));
    expect(detail(target)).toBeNull();

    click(node(target, 0));
    expect(text(detail(target))).toContain("The question is where the graph starts");
    expect(detail(target)!.querySelector('[data-testid="crp-rag-check"]')).toBeNull();
    destroy();
  });

  it("lists each path's steps with their results and the path's answer", () => {
    const opened: SourceTarget[] = [];
    const trace = crpRagTrace();
    const { target, destroy } = render(CrpRagTrace, { trace, onCite: (t) => opened.push(t) });
    const paths = [...target.querySelectorAll<HTMLElement>('[data-testid="crp-rag-path"]')];
    expect(paths).toHaveLength(2);
    const [first] = paths;
    expect(text(first.querySelector("h5"))).toBe("Path 1");
    const steps = [...first.querySelectorAll(".path-steps > li")];
    expect(steps.map((li) => text(li.querySelector(".step-text")))).toEqual([
      "How many members does Letters to Cleo have?",
      "Compare Letters to Cleo's six members with Screaming Trees' four",
    ]);
    expect(text(steps[0].querySelector(".result"))).toBe("Letters to Cleo has six members [2].");
    expect(text(first.querySelector(".path-answer"))).toBe("Path answer Letters to Cleo has more members: six [2] against four [4].");
    first.querySelector<HTMLButtonElement>(".path-answer button.cite")!.click();
    expect(opened).toEqual([trace.passages[1]]);
    // A step's name opens it in the graph's details.
    click(button(steps[1], "Step 4"));
    expect(Number(detail(target)!.dataset.id)).toBe(4);
    destroy();
  });

  it("says plainly when no path had enough knowledge, and names the steps that lacked it", () => {
    const base = crpRagTrace();
    const nodes = base.nodes.map((n) =>
      n.id === 4 && n.check ? { ...n, check: { ...n.check, perplexity: 6.02, sufficient: false } } : n,
    );
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace({ nodes, refused: true }) });
    const banner = target.querySelector('[data-testid="crp-rag-refused"]')!;
    expect(text(banner)).toMatch(/^No path had enough knowledge\./);
    expect(text(banner)).toContain("the answer names the steps that lacked it");
    const lacking = [...banner.querySelectorAll("button")];
    expect(lacking.map(text)).toEqual(["Step 3", "Step 4", "Step 5"]);
    click(lacking[1]);
    expect(Number(detail(target)!.dataset.id)).toBe(4);
    expect(text(detail(target)!.querySelector('[data-testid="crp-rag-verdict"]'))).toBe("insufficient");
    destroy();
  });

  it("draws a partial trace while the graph grows: no checks, no paths yet", () => {
    const base = crpRagTrace();
    const trace = crpRagTrace({
      nodes: base.nodes.slice(0, 4).map((n) => ({ ...n, knowledge: null, check: null, passages: [] })),
      edges: base.edges.slice(0, 3),
      merges: [],
      stop: null,
      paths: [],
      passages: [],
    });
    const live = render(CrpRagTrace, { trace, running: true });
    expect(ids(nodes(live.target))).toEqual([0, 1, 2, 3]);
    expect(nodes(live.target).map((n) => n.dataset.status)).toEqual(["question", "unchecked", "unchecked", "unchecked"]);
    expect(text(node(live.target, 1).querySelector("text.mark"))).toBe("");
    expect(nodes(live.target).some((n) => n.classList.contains("on-path"))).toBe(false);
    expect(live.target.querySelector('[data-testid="crp-rag-path-pick"]')).toBeNull();
    expect(fact(live.target, "Stopped")).toBe("still growing");
    expect(text(live.target.querySelector('[data-testid="crp-rag-paths"] .pending.working'))).toBe(
      "Waiting for the graph to stop growing…",
    );
    expect(text(live.target.querySelector('[data-testid="crp-rag-passages"] .pending'))).toBe(
      "Waiting for the steps to retrieve…",
    );
    expect(text(live.target.querySelector('[data-testid="crp-rag-legend"][data-kind="unchecked"]'))).toContain(
      "its check has not come back yet",
    );
    click(node(live.target, 2));
    expect(text(detail(live.target)!.querySelector('[data-testid="crp-rag-knowledge"]'))).toContain("Not drawn yet.");
    expect(text(detail(live.target)!.querySelector('[data-testid="crp-rag-check"]'))).toContain("Not checked yet.");
    live.destroy();

    // Only the question so far.
    const first = render(CrpRagTrace, {
      trace: crpRagTrace({ ...trace, nodes: trace.nodes.slice(0, 1), edges: [] }),
      running: true,
    });
    expect(ids(nodes(first.target))).toEqual([0]);
    expect(edges(first.target)).toHaveLength(0);
    expect(text(first.target.querySelector(".graph .pending.working"))).toBe("Planning the first steps…");
    first.destroy();

    // Paths being reasoned along: answers still to come.
    const reasoning = crpRagTrace({ paths: base.paths.map((p) => ({ ...p, results: p.results.slice(0, 1), answer: "" })) });
    const mid = render(CrpRagTrace, { trace: reasoning, running: true });
    const path = mid.target.querySelector('[data-testid="crp-rag-path"]')!;
    expect(text(path.querySelector(".path-steps > li:nth-child(2) .pending"))).toBe("Not reasoned yet.");
    expect(text(path.querySelector(".path-answer .pending.working"))).toBe("Reasoning along this path…");
    mid.destroy();
  });

  it("shows a step's passages as its knowledge under no-aggregation", () => {
    const base = crpRagTrace();
    const trace = crpRagTrace({ variant: "no-aggregation", nodes: base.nodes.map((n) => ({ ...n, knowledge: null })) });
    const { target, destroy } = render(CrpRagTrace, { trace });
    expect(fact(target, "Variant")).toMatch(/^no-aggregation/);
    click(node(target, 2));
    const knowledge = detail(target)!.querySelector('[data-testid="crp-rag-knowledge"]')!;
    expect(text(knowledge)).toContain("Under no-aggregation the passages retrieved for the step are its knowledge");
    expect([...knowledge.querySelectorAll(".passage-text")].map(text)).toEqual([
      bandPassage(3).text,
      bandPassage(4).text,
    ]);
    destroy();
  });

  it("says steps go unchecked under no-evaluation, and paths have no step results under no-iterative", () => {
    const base = crpRagTrace();
    const unchecked = crpRagTrace({ variant: "no-evaluation", nodes: base.nodes.map((n) => ({ ...n, check: null })) });
    const a = render(CrpRagTrace, { trace: unchecked });
    expect(fact(a.target, "Sufficiency")).toBe("not checked (no-evaluation)");
    expect(nodes(a.target).filter((n) => n.dataset.status === "unchecked")).toHaveLength(5);
    expect(text(a.target.querySelector('[data-testid="crp-rag-legend"][data-kind="unchecked"]'))).toContain(
      "no-evaluation checks no step",
    );
    click(node(a.target, 1));
    expect(text(detail(a.target)!.querySelector('[data-testid="crp-rag-check"]'))).toContain(
      "Not checked: the no-evaluation variant reasons along paths whatever their knowledge.",
    );
    a.destroy();

    const once = crpRagTrace({ variant: "no-iterative", paths: base.paths.map((p) => ({ ...p, results: [] })) });
    const b = render(CrpRagTrace, { trace: once });
    const path = b.target.querySelector('[data-testid="crp-rag-path"]')!;
    expect(text(path)).toContain("Answered in one call from all its steps (no-iterative)");
    expect(path.querySelector(".result")).toBeNull();
    expect(text(path.querySelector(".path-answer"))).toContain("Letters to Cleo has more members");
    b.destroy();
  });

  it("says when a check was the model's own verdict", () => {
    const base = crpRagTrace();
    const nodes = base.nodes.map((n) =>
      n.check ? { ...n, check: { ...n.check, test: "self-assessment" as const, perplexity: null, reply: n.check.sufficient ? "Yes, it does." : "No." } } : n,
    );
    const { target, destroy } = render(CrpRagTrace, { trace: crpRagTrace({ nodes }) });
    expect(fact(target, "Sufficiency")).toBe("the model's own verdict where the backend gave no log-probabilities");
    expect(text(node(target, 1).querySelector("text.mark"))).toBe("✓ yes");
    expect(text(node(target, 3).querySelector("text.mark"))).toBe("✗ no");
    click(node(target, 1));
    const check = detail(target)!.querySelector('[data-testid="crp-rag-check"]')!;
    expect(check.querySelector('[data-testid="crp-rag-perplexity"]')).toBeNull();
    expect(text(check)).toContain("the model's own verdict");
    expect(text(check)).toContain("Yes, it does.");
    destroy();
  });

  it("lists the passages, marks the cited ones, and shows notes and unknown citations", () => {
    const opened: SourceTarget[] = [];
    const trace = crpRagTrace({ notes: ["left out a step that repeats one before it: Who is in Letters to Cleo?"], unknown_citations: [9] });
    const { target, destroy } = render(CrpRagTrace, {
      trace,
      run: { citations: [bandPassage(2), bandPassage(4)] } as unknown as TraceProps["run"],
      onCite: (t) => opened.push(t),
    });
    const items = [...target.querySelectorAll('[data-testid="crp-rag-passages"] .passages li')];
    expect(items.map((li) => li.classList.contains("cited"))).toEqual([false, true, false, true]);
    items[2].querySelector("button")!.click();
    expect(opened).toEqual([trace.passages[2]]);
    expect(text(target.querySelector('[aria-label="Notes on the reasoning"]'))).toContain("left out a step");
    expect(text(target.querySelector(".warning"))).toContain("[9]");
    click(node(target, 1));
    const retrieved = [...detail(target)!.querySelectorAll('[data-testid="crp-rag-retrieved"] button')];
    expect(retrieved.map((b) => b.classList.contains("cited"))).toEqual([false, true]);
    destroy();
  });

  it("marks a step's attributed passages apart from its cited ones", () => {
    const { target, destroy } = render(CrpRagTrace, {
      trace: crpRagTrace(),
      run: { citations: [bandPassage(2), { ...bandPassage(1), by: "attribution" }] } as unknown as TraceProps["run"],
    });
    const items = [...target.querySelectorAll('[data-testid="crp-rag-passages"] .passages li')];
    expect(items.map((li) => li.classList.contains("attributed"))).toEqual([true, false, false, false]);
    click(node(target, 1));
    const retrieved = [...detail(target)!.querySelectorAll('[data-testid="crp-rag-retrieved"] button')];
    expect(retrieved.map((b) => [b.classList.contains("cited"), b.classList.contains("attributed")])).toEqual([
      [false, true],
      [true, false],
    ]);
    expect(retrieved[0].getAttribute("title")).toContain("attributed: the model did not mark it");
    expect(retrieved[1].getAttribute("title")).toContain("cited by the answer");
    destroy();
  });

  it("cuts long step text off in its box and keeps all of it in the title and the details", () => {
    const long = `How many members has each band had, ${"counting everyone who ever played with them on a record or a tour, ".repeat(3)}in all?`;
    const base = crpRagTrace();
    const trace = crpRagTrace({ nodes: base.nodes.map((n) => (n.id === 5 ? { ...n, text: long } : n)) });
    const { target, destroy } = render(CrpRagTrace, { trace });
    const box = node(target, 5);
    expect(box.dataset.truncated).toBe("true");
    const lines = [...box.querySelectorAll("text.label tspan")].map(text);
    expect(lines).toHaveLength(3);
    expect(lines[2].endsWith("…")).toBe(true);
    expect(box.querySelector("title")?.textContent).toBe(long);
    click(box);
    expect(detail(target)!.querySelector('[data-testid="crp-rag-detail-text"]')?.textContent).toBe(long);
    destroy();
  });

  it("keeps model and document text inert wherever it appears", () => {
    const base = crpRagTrace();
    const trace = crpRagTrace({
      nodes: base.nodes.map((n) => ({
        ...n,
        text: HOSTILE,
        knowledge: n.knowledge === null ? null : `${HOSTILE} [1]`,
        check: n.check ? { ...n.check, reply: HOSTILE } : null,
      })),
      merges: [{ ...base.merges[0], texts: [HOSTILE, "<img src=x onerror=alert(1)>"] }],
      paths: base.paths.map((p) => ({ ...p, results: p.results.map(() => HOSTILE), answer: HOSTILE })),
      passages: [bandPassage(1), bandPassage(2), bandPassage(3), { ...bandPassage(4), text: HOSTILE, heading_path: HOSTILE }],
      notes: [HOSTILE],
    });
    const { target, destroy } = render(CrpRagTrace, { trace, running: true });
    fire(node(target, 2), "mouseenter");
    click(node(target, 2));
    expectInert(target);
    expect(node(target, 2).querySelector("title")?.textContent).toBe(HOSTILE);
    expect(node(target, 2).getAttribute("aria-label")).toContain(HOSTILE);
    expect(text(node(target, 2).querySelector("text.label"))).toContain("<img");
    expect(detail(target)!.querySelector('[data-testid="crp-rag-detail-text"]')?.textContent).toBe(HOSTILE);
    expect(text(detail(target)!.querySelector('[data-testid="crp-rag-knowledge"]'))).toContain("<img");
    expect(text(detail(target)!.querySelector('[data-testid="crp-rag-check"]'))).toContain("<script>");
    expect(text(detail(target)!.querySelector('[data-testid="crp-rag-merged"]'))).toContain("<img src=x onerror=alert(1)>");
    expect(text(target.querySelector('[data-testid="crp-rag-paths"]'))).toContain("<script>");
    expectVisible(target.querySelector('[aria-label="Notes on the reasoning"]')!);
    destroy();
  });
});
