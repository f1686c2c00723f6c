// The real app in a real window (Xvfb + tauri-driver + WebKitWebDriver), on
// the embedded models: name the model that answers and time a question on
// it at first start, add the rust-book folder, wait for indexing, ask
// with vanilla-rag, open a citation, search the library and open a hit in
// place, hold a two-turn conversation and take
// it to Compare, hold one within a scope, keep a collection, open a
// passage of a PDF on its rendered page with its lines boxed, compare two
// methods, export a run,
// watch PAGER's page fill in, ActiveRAG's agents and RDR2's routes, build
// part of the information-gain graph and draw iG²RAG's walk over it, and
// vanilla-rag's trace over the same walk as its retriever, draw CRP-RAG's
// reasoning graph and open one of its steps, evaluate two
// methods on two rust-book questions, compare them question by question
// and open their runs side by side,
// list the models on this computer in Settings and use one found there,
// serve the library to other apps from Settings and reach it with the token
// from outside the window,
// check hostile document text renders inert, and close the window in the
// middle of ingesting the hotpotqa sample's 2,006 passages. Screenshots of every view go
// to $FOLIO_E2E_OUT/screenshots. Run through scripts/e2e.sh.

import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it as vitestIt } from "vitest";

import { writeHotpotqaFolder } from "./corpora";
import { textPdf } from "./pdf";
import { answerSaveDialog, closeWindowsOf, confirmDialog } from "./x11";
import { Keys, Session, SessionGone } from "./webdriver";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; run the end-to-end tests through scripts/e2e.sh`);
  return value;
};

const out = env("FOLIO_E2E_OUT");
const corpus = join(out, "corpus");
const shots = join(out, "screenshots");
const MINUTE = 60_000;

let app: Session;

async function shot(name: string) {
  // A screenshot is of the last frame painted, which under load can be from
  // before the test's last step: wait for the page to paint twice more.
  await app.execute("return new Promise((painted) => requestAnimationFrame(() => requestAnimationFrame(painted)));");
  writeFileSync(join(shots, `${name}.png`), await app.screenshot());
}

/** Closes the source viewer the way a person does, with Escape. */
async function closeViewer() {
  await app.post("actions", {
    actions: [{ type: "key", id: "keyboard", actions: [{ type: "keyDown", value: Keys.Escape }, { type: "keyUp", value: Keys.Escape }] }],
  });
}

async function open(view: string) {
  await (await app.byTestId(`nav-${view}`)).click();
}

/**
 * Waits until nothing in the view is still loading, so that a click lands
 * where it was aimed: Settings' list of the models on this computer grows
 * when its look ends, and moves everything below it down the page.
 */
async function settled() {
  await app.waitFor("the view to finish loading", MINUTE, async () => {
    return (await app.all('main [aria-busy="true"]')).length === 0;
  });
}

async function number(testId: string) {
  return Number((await (await app.byTestId(testId)).text()).replace(/[^0-9]/g, "") || "0");
}

async function chooseMethod(id: string) {
  const method = await app.byTestId("method-select");
  await app.execute(
    "const s = arguments[0]; s.value = arguments[1]; s.dispatchEvent(new Event('change', { bubbles: true }));",
    { "element-6066-11e4-a52e-4f735466cecf": method.id },
    id,
  );
}

/** Sets the input or select with this id and tells the page, as typing or picking would. */
async function setField(id: string, value: string) {
  await app.execute(
    "const i = document.getElementById(arguments[0]); i.value = arguments[1];" +
      " i.dispatchEvent(new Event(i.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }));",
    id,
    value,
  );
}

/** Asks in the conversation on screen: a follow-up once there is a turn. */
async function askFollowUp(text: string) {
  const question = await app.byTestId("question-input");
  await question.clear();
  await question.type(text);
  await question.type(Keys.Enter);
}

/** Asks in a new thread, so the Ask view shows this question's turn alone. */
async function askQuestion(text: string) {
  const fresh = await app.all('[data-testid="new-thread"]');
  if (fresh.length > 0) await fresh[0].click();
  await askFollowUp(text);
}

/**
 * Closes every toast as a person would: left open, one covers the buttons
 * at the bottom right (Ask's New thread) that the next tests click.
 */
async function dismissToasts() {
  for (const close of await app.all('[data-testid="toast"] button')) await close.click();
  await app.waitFor("the toasts to go", 10_000, async () => (await app.all('[data-testid="toast"]')).length === 0);
}

/**
 * Submits Search and waits for this query's own answer. The last search's
 * hits stay on screen while the next one runs, so waiting for any hit
 * would read the old list, or a node of it being replaced.
 */
async function searchFor(query: string) {
  await (await app.byTestId("search-submit")).click();
  await app.waitFor(`the search for “${query}” to answer`, MINUTE, async () => {
    const outcome = await app.execute<string>("return document.querySelector('[data-testid=\"search-status\"]').closest('.outcome').textContent;");
    return !outcome.includes("Searching…") && (outcome.includes(`for “${query}”`) || (await app.all(".outcome .error-notice")).length > 0);
  });
}

/** Whether the Ask view's newest turn shows a finished run's status. */
async function answered() {
  const status = await app.all('[data-testid="ask-turn"]:last-of-type [data-testid="answer-status"]');
  return status.length > 0 && (await status[0].text()).trim().length > 0;
}

/**
 * The rust-book chapters the questions below are about (the appendices,
 * the first four chapters, release profiles: 25 of the sample's 112) plus
 * one hostile note, copied so the test owns them. The rest of the book
 * would only make indexing and the evaluation's own index slower; the
 * whole book is indexed by tests/rust_book.rs.
 */
const CHAPTERS = /^(appendix-|ch0[0-4]-|ch14-01-)/;

function makeCorpus() {
  const book = env("FOLIO_E2E_CORPUS");
  mkdirSync(corpus, { recursive: true });
  for (const name of readdirSync(book).filter((n) => CHAPTERS.test(n))) copyFileSync(join(book, name), join(corpus, name));
  // Plain text keeps markup verbatim in the index (the markdown and HTML
  // loaders drop it), so it reaches the window as document text.
  writeFileSync(
    join(corpus, "zz-hostile-note.txt"),
    "Hostile note about mutable variables\n\n" +
      "Mutable variables: <script>window.__pwned = 1</script> and " +
      '<img src="x" onerror="window.__pwned = 2; document.title = \'pwned\'"> are just text here.\n',
  );
  // A two-page PDF, for the page viewer.
  writeFileSync(
    join(corpus, "orchard-almanac.pdf"),
    textPdf("Orchard Almanac", [
      ["Orchard Almanac", "", "Apples are picked from late August", "and kept in a cool dark shed."],
      ["Quince trees flower in late April,", "and their fruit is ready in October.", "", "Medlars are eaten only when bletted."],
    ]),
  );
  return readdirSync(corpus).length;
}

async function startApp() {
  app = await Session.start(env("WEBDRIVER_URL"), env("FOLIO_APP"));
  await app.find('main[data-ready="true"]', 2 * MINUTE);
}

/**
 * A test of the window. Under Xvfb, Mesa's software rasterizer has
 * segfaulted in WebKit's compositor thread (not in Folio's code), and the
 * page's process took the WebDriver session with it; every later test then
 * failed at its first step. Where a test fails and the session is gone, the
 * app is stopped, started in a new window on the same data, and the test
 * runs once more, whole: it passes only if it passes there.
 */
function it(name: string, body: () => Promise<void>, timeoutMs?: number) {
  vitestIt(
    name,
    async () => {
      try {
        await body();
      } catch (e) {
        if (!(await pageDied())) throw e;
        console.error(`the window's page died during “${name}” (${e}); the test runs again in a new window`);
        await reopenApp();
        await body();
      }
    },
    timeoutMs,
  );
}

/**
 * Whether the window's page is gone. When WebKit's page process dies, the
 * driver either deletes the session or keeps one whose every command fails
 * ("Could not parse element info"); a page that runs a script is alive. It
 * is asked for a moment, as the session may go just after the failed call.
 */
async function pageDied(): Promise<boolean> {
  for (let asked = 0; asked < 8; asked++) {
    try {
      if (await app.execute<boolean>('return document.querySelector("main") !== null;')) return false;
    } catch (e) {
      if (e instanceof SessionGone) return true;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return true;
}

/** Kills the app whose page died (as kill -9 would: the app loses nothing to it) and starts it in a new window. */
async function reopenApp() {
  let pid: number | undefined;
  try {
    pid = appPid();
  } catch {
    // pgrep found none: the app has gone with its page.
  }
  if (pid !== undefined) {
    process.kill(pid, "SIGKILL");
    await app.waitFor("the app to exit", 30_000, async () => exited(pid));
  }
  await app.end();
  await startApp();
}

/** The app's process (WebKitWebDriver starts it; there is only one). */
function appPid() {
  return Number(execFileSync("pgrep", ["-x", "folio-app"], { encoding: "utf8" }).trim().split("\n")[0]);
}

/** Gone, or a zombie its parent has not reaped yet. */
function exited(pid: number) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

type Job = { id: number; state: string; interrupted: boolean; done: number; total: number; payload: { roots: string[] } };

/** The first ingest job `pick` accepts, newest first, as the CLI reads it from the app's index. */
function findJob(what: string, pick: (job: Job) => boolean): Job {
  const status = JSON.parse(execFileSync(env("FOLIO_CLI"), ["status", "--json"], { encoding: "utf8" }));
  const job = (status.jobs as Job[]).find(pick);
  if (!job) throw new Error(`no job ${what}`);
  return job;
}

async function closeAppWindow() {
  const pid = appPid();
  // Under load the first request is sometimes not acted on (Tauri never
  // hears CloseRequested); like a person, click again every two seconds.
  let polls = 0;
  await app.waitFor("the app to exit", 30_000, async () => {
    if (polls++ % 8 === 0) await closeWindowsOf(pid);
    return exited(pid);
  });
  await app.end();
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  await startApp();
});

afterAll(async () => {
  await app?.end();
});

/**
 * A failed test leaves what the window showed, for a failure on CI (where
 * only the log is kept) to be read without a rerun: the visible text and
 * the end of the app's own output, printed, and a screenshot in
 * screenshots/failed/.
 */
beforeEach(({ task, onTestFailed }) => {
  onTestFailed(async () => {
    const said = [`the window when “${task.name}” failed:`];
    try {
      said.push((await app.execute<string>("return document.body.innerText;")).slice(0, 4000));
      mkdirSync(join(shots, "failed"), { recursive: true });
      writeFileSync(join(shots, "failed", `${task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 80)}.png`), await app.screenshot());
    } catch (e) {
      said.push(`(the window could not be read: ${e})`);
    }
    const log = join(out, "tauri-driver.log");
    const output = existsSync(log) ? readFileSync(log, "utf8").trim() : "";
    if (output) said.push("the app's output, last lines:", ...output.split("\n").slice(-40));
    console.error(said.join("\n"));
  });
});

describe("Folio in a real window", () => {
  it("names the model that answers on first run, its size, and the time a question takes here", async () => {
    const banner = await app.byTestId("first-run");
    // scripts/e2e.sh has the kit's SmolLM2 answer.
    expect(await banner.text()).toMatch(/Folio answers with SmolLM2-135M-Instruct \(Q4_1\), built in \(94 MiB\)\./);
    const pace = await app.byTestId("first-run-pace");
    await shot("01-first-run-measuring");
    await app.waitFor("a question timed on the model", 4 * MINUTE, async () =>
      /On this computer a question takes (about \d+ s|under a second)\./.test(await pace.text()),
    );
    await shot("01-first-run");
  });

  it("indexes an added folder with live progress", async () => {
    const files = makeCorpus();
    await open("library");
    await (await app.byTestId("folder-path-input")).type(corpus);
    await (await app.byTestId("add-folder-path")).click();
    // A typed path is used only once confirmed in a native dialog.
    await confirmDialog();
    await app.byTestId("folder-row", 30_000);
    await app.byTestId("job-row", 30_000);
    await shot("02-library-indexing");
    await app.waitFor("every document indexed", 8 * MINUTE, async () => (await number("overview-documents")) >= files);
    expect(await number("overview-chunks")).toBeGreaterThan(files);
    await shot("03-library-indexed");
  });

  it("asks about one whole document from Library", async () => {
    const name = "ch03-04-comments.md";
    await open("library");
    await (await app.byTestId("folder-documents-toggle", 15_000)).click();
    const button = await app.find(
      `[data-testid="document-row"][data-path$="/${name}"] [data-testid="ask-about-document"]`,
      30_000,
    );
    await button.click();
    // Ask opens on a new thread, with the method and a scope of that document alone.
    await app.byTestId("question-input", 15_000);
    await shot("15a-whole-document-composer");
    expect(await (await app.byTestId("scope-summary")).text()).toBe(`in ${name}`);
    expect(await (await app.byTestId("whole-document-note")).text()).toContain(name);
    expect(await app.execute<string>("return document.getElementById('method').value;")).toBe("whole-document");
    expect(await app.execute<string>("return document.activeElement?.dataset.testid ?? '';")).toBe("question-input");
    expect(await app.all('[data-testid="ask-turn"]')).toHaveLength(0);

    await askFollowUp("What kinds of comments does Rust have?");
    await app.waitFor("the whole-document answer to finish", 8 * MINUTE, answered);
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    expect((await (await app.byTestId("answer")).text()).length).toBeGreaterThan(10);
    const trace = await app.byTestId("whole-document-trace", 15_000);
    expect(await trace.text()).toMatch(/^Read all of /);
    expect((await app.all('[data-testid="wd-section"]')).length).toBeGreaterThan(0);
    // The trace's top in view, scrolled again until the page has settled there.
    await app.waitFor("the trace scrolled into view", 15_000, async () => {
      const top = await app.execute<number>(
        "const t = document.querySelector('[data-testid=\"whole-document-trace\"]'); t.scrollIntoView({ block: 'start' }); return t.getBoundingClientRect().top;",
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      return Math.abs(top) < 2;
    });
    await shot("15-whole-document");

    // Leave Ask as the tests after this one expect it: the whole library, a retrieving method.
    await (await app.byTestId("scope-picker")).click();
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");
    await chooseMethod("vanilla-rag");
    await (await app.byTestId("new-thread")).click();
  });

  it("answers with vanilla-rag, streams, cites, and opens a citation in place", async () => {
    await open("ask");
    await chooseMethod("vanilla-rag");
    await askQuestion("Are variables immutable by default?");
    await app.waitFor("the answer to finish", 5 * MINUTE, answered);
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    expect((await (await app.byTestId("answer")).text()).length).toBeGreaterThan(10);
    const citations = await app.all('[data-testid="citation"]');
    expect(citations.length).toBeGreaterThan(0);
    await app.byTestId("trace-panel");
    await shot("04-ask-answer");

    await citations[0].click();
    const viewer = await app.byTestId("source-viewer", 15_000);
    const highlighted = await app.byTestId("source-highlight", 15_000);
    expect((await highlighted.text()).length).toBeGreaterThan(0);
    expect(await viewer.text()).toMatch(/\.md/);
    await shot("05-source-viewer");
    await closeViewer();
  });

  it("searches the library without a model, lists the passages best first, and opens one in place", async () => {
    await open("search");
    const query = await app.byTestId("search-query", 15_000);
    // The CLI's defaults: ten hits, hybrid, the whole library.
    const form = await app.execute<{ k: string; mode: string }>(
      "return { k: document.getElementById('search-k').value, mode: document.getElementById('search-mode').value };",
    );
    expect(form).toEqual({ k: "10", mode: "hybrid" });
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");

    // Only the almanac PDF makeCorpus writes says this (on its second page).
    await query.clear();
    await query.type("Quince trees flower in late April");
    await searchFor("Quince trees flower in late April");
    const failures = await Promise.all((await app.all(".error-notice")).map((notice) => notice.text()));
    expect(failures).toEqual([]);
    expect(await app.all('[data-testid="search-empty"]')).toHaveLength(0);
    const hits = await app.all('[data-testid="search-hit"]');
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.length).toBeLessThanOrEqual(10);
    const first = '[data-testid="search-hit"]:first-child';
    expect((await (await app.find(`${first} [data-testid="search-hit-file"]`)).text()).trim()).toBe("orchard-almanac.pdf");
    expect(await (await app.find(`${first} [data-testid="search-hit-snippet"]`)).text()).toMatch(/Quince trees flower/);
    expect((await (await app.find(`${first} [data-testid="search-hit-score"]`)).text()).trim()).toMatch(/^\d+\.\d{4}$/);
    await shot("21-search");

    // The hit opens where it is: the PDF on its page, rendered.
    await (await app.find(`${first} [data-testid="search-hit-open"]`)).click();
    const viewer = await app.byTestId("source-viewer", 15_000);
    await app.find('[data-testid="pdf-view"][data-rendered-page="2"]', 30_000);
    expect(await viewer.text()).toContain("orchard-almanac.pdf · page 2");
    await shot("21b-search-source");
    await closeViewer();
  });

  it("gives an answer the model left unmarked a source, marked attributed, with the sentence it supports", async () => {
    await open("ask");
    await chooseMethod("vanilla-rag");
    await askQuestion("Which keyword makes a variable mutable?");
    await app.waitFor("the answer to finish", 5 * MINUTE, answered);
    expect(await (await app.byTestId("answer")).text()).not.toMatch(/\[\d+\]/);
    const badge = await app.byTestId("citation-attributed", 15_000);
    expect((await badge.text()).trim()).toBe("attributed");
    expect(await (await app.byTestId("citation-supports")).text()).toMatch(/mutable/i);
    await shot("05a-attributed-source");
  });

  it("holds a conversation: the follow-up is read as a standalone question and answered below the first turn", async () => {
    await open("ask");
    await chooseMethod("vanilla-rag");
    await askQuestion("What opt-level does the release profile use?");
    await app.waitFor("the first turn to finish", 5 * MINUTE, answered);
    await askFollowUp("And for the dev profile?");
    await app.waitFor("the follow-up to finish", 5 * MINUTE, async () => {
      return (await app.all('[data-testid="ask-turn"]')).length === 2 && (await answered());
    });
    expect(await (await app.byTestId("ask-thread")).text()).toMatch(/^Thread \d+$/);
    const notes = await app.all('[data-testid="ask-turn"]:last-of-type [data-testid="rewrite-note"]');
    expect(notes).toHaveLength(1);
    expect(await notes[0].text()).toMatch(/^Searched as/);
    await shot("04b-ask-conversation");
    // The newest answer's end is in view.
    const place = await app.execute<{ bottom: number; height: number }>(
      "const answers = document.querySelectorAll('[data-testid=\"ask-turn\"] [data-testid=\"answer\"]');" +
        "const r = answers[answers.length - 1].getBoundingClientRect(); return { bottom: r.bottom, height: window.innerHeight };",
    );
    expect(place.bottom).toBeGreaterThan(0);
    expect(place.bottom).toBeLessThanOrEqual(place.height + 1);

    // Compare can put the next question to several methods with this history.
    const thread = (await (await app.byTestId("ask-thread")).text()).replace(/\D/g, "");
    await (await app.byTestId("compare-follow-up")).click();
    const banner = await app.byTestId("compare-thread", 15_000);
    expect(await banner.text()).toContain(`Following up thread ${thread}`);
    await shot("04c-compare-follow-up");
    await (await app.byTestId("compare-thread-clear")).click();
  });

  it("asks a two-turn conversation within a scope", async () => {
    await open("ask");
    await chooseMethod("vanilla-rag");
    const fresh = await app.all('[data-testid="new-thread"]');
    if (fresh.length > 0) await fresh[0].click();
    const status = async () => (await (await app.byTestId("scope-status")).text()).trim();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");

    // Narrowed to one chapter of the indexed folder (named as the app names it).
    await (await app.byTestId("scope-picker")).click();
    const folder = await (await app.find('[data-testid="scope-folder"]', 15_000)).attribute("data-value");
    expect(folder).toMatch(/corpus$/);
    const chapter = `${folder}/ch03-02-data-types.md`;
    await (await app.byTestId("scope-path-input")).type(chapter);
    await (await app.byTestId("scope-path-add")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("in ch03-02-data-types.md");
    await app.waitFor("the scope counted", 15_000, async () => (await status()) === "1 document");

    // A format the chapter is not: nothing matches, and Ask says why instead of asking.
    const pdf = await app.find('[data-testid="scope-format"][data-value="pdf"]');
    await pdf.click();
    await app.waitFor("the scope refused", 15_000, async () => /^nothing indexed matches the scope/.test(await status()));
    const ask = await app.byTestId("ask-submit");
    expect(await ask.attribute("disabled")).not.toBeNull();
    expect(await ask.attribute("title")).toMatch(/^Change the scope to ask: nothing indexed matches the scope/);
    await shot("13a-scope-unusable");
    await pdf.click();
    await app.waitFor("the scope counted again", 15_000, async () => (await status()) === "1 document");
    expect(await ask.attribute("disabled")).toBeNull();
    await app.execute("document.querySelector('[data-testid=\"scope-panel\"]').scrollIntoView({ block: 'end' });");
    await shot("13-scope-picker-open");
    await (await app.byTestId("scope-done")).click();
    expect(await app.all('[data-testid="scope-panel"]')).toHaveLength(0);

    await askFollowUp("How many bytes does a char take in Rust?");
    await app.waitFor("the first turn to finish", 5 * MINUTE, answered);
    await askFollowUp("And a bool?");
    await app.waitFor("the follow-up to finish", 5 * MINUTE, async () => {
      return (await app.all('[data-testid="ask-turn"]')).length === 2 && (await answered());
    });
    // Each turn says the scope it was asked within, and the scope stays set.
    const scopes = await app.execute<string[]>(
      "return [...document.querySelectorAll('[data-testid=\"ask-turn\"]')].map((t) => t.querySelector('[data-testid=\"turn-scope\"]')?.textContent.trim() ?? '');",
    );
    expect(scopes).toEqual(["Scope: in ch03-02-data-types.md", "Scope: in ch03-02-data-types.md"]);
    expect(await (await app.byTestId("scope-summary")).text()).toBe("in ch03-02-data-types.md");
    // Every source either turn lists (cited, or retrieved in the trace) is that chapter.
    const sources = await app.execute<string[]>(
      "const turns = '[data-testid=\"ask-turn\"]';" +
        " const cited = [...document.querySelectorAll(`${turns} .citations .path`)].map((p) => p.title);" +
        " const retrieved = [...document.querySelectorAll(`${turns} [data-testid=\"trace-panel\"] .passages .path`)]" +
        "   .map((p) => p.textContent.trim().replace(/ · page \\d+$/, ''));" +
        " return [...cited, ...retrieved];",
    );
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(source).toBe(chapter);
    await app.execute("document.querySelectorAll('[data-testid=\"ask-turn\"] header')[1].scrollIntoView({ block: 'center' });");
    await shot("13b-scoped-conversation");

    // History says it of every turn of the thread too.
    await open("history");
    await app.waitFor("the scoped thread in History", 15_000, async () => {
      return (await app.all('[data-testid="history-turn"] [data-testid="turn-scope"]')).length === 2;
    });
    await shot("13c-history-scope");

    // Back to the whole library for the tests after this one.
    await open("ask");
    await (await app.byTestId("scope-picker")).click();
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");
  });

  it("keeps collections in Library, offers them to Ask's scope picker, and deletes them", async () => {
    await open("library");
    const panel = await app.byTestId("collections-panel", 15_000);
    await app.execute("arguments[0].scrollIntoView({ block: 'start' });", { "element-6066-11e4-a52e-4f735466cecf": panel.id });
    // A folder outside the library is refused with the engine's reason. Not
    // /tmp: a checkout there has the library's folders inside it.
    await (await app.byTestId("collection-name")).type("rust basics");
    await (await app.byTestId("collection-path-input")).type("/usr/share");
    await (await app.byTestId("collection-path-add")).click();
    await (await app.byTestId("collection-save")).click();
    const refused = await app.find(".collection-form .error-notice", 15_000);
    expect(await refused.text()).toMatch(/not in the library/);
    await (await app.byTestId("collection-path-remove")).click();

    const folder = await app.byTestId("collection-folder");
    const path = await folder.attribute("data-value");
    await folder.click();
    await (await app.byTestId("collection-save")).click();
    const row = await app.find('[data-testid="collection-row"][data-name="rust basics"]', 15_000);
    expect(await row.text()).toMatch(/\b\d+ documents\b/);
    expect(await row.text()).toContain(path!);
    expect(await app.all(".collection-form .error-notice")).toHaveLength(0);
    await app.execute("arguments[0].scrollIntoView({ block: 'start' });", { "element-6066-11e4-a52e-4f735466cecf": panel.id });
    await shot("14-collections");

    // The picker offers it the next time it opens.
    await open("ask");
    await (await app.byTestId("scope-picker")).click();
    await (await app.find('[data-testid="scope-collection"][data-value="rust basics"]', 15_000)).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("collection rust basics");
    await app.waitFor("the collection counted", 15_000, async () => {
      const status = await app.byTestId("scope-status");
      return (await status.attribute("data-state")) === "ok" && /^\d+ documents$/.test((await status.text()).trim());
    });
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();

    // Compare has a scope of its own, picked the same way.
    await open("compare");
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");
    await (await app.byTestId("scope-picker")).click();
    await (await app.find('[data-testid="scope-collection"][data-value="rust basics"]', 15_000)).click();
    await app.waitFor("the collection counted in Compare", 15_000, async () => {
      return (await (await app.byTestId("scope-status")).attribute("data-state")) === "ok";
    });
    await shot("14b-compare-scope");
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();

    // The saved collection's toast would cover Delete once it is scrolled to the window's foot.
    await dismissToasts();
    await open("library");
    await (await app.find('[data-testid="collection-row"][data-name="rust basics"] [data-testid="collection-delete"]', 15_000)).click();
    await (await app.byTestId("confirm-accept")).click();
    await app.waitFor("the collection gone", 15_000, async () => (await app.all('[data-testid="collection-row"]')).length === 0);
    await app.byTestId("toast", 10_000);
    await dismissToasts();
  });

  it("opens a cited PDF on its page, rendered, with the passage highlighted (or a note when its place was not recorded)", async () => {
    await open("ask");
    await chooseMethod("vanilla-rag");
    await askQuestion("When do quince trees flower?");
    await app.waitFor("the answer to finish", 5 * MINUTE, answered);
    // The retrieved passages in the trace link to their sources; open the
    // almanac's second page from there.
    const openAlmanacPage2 = () =>
      app.waitFor("the almanac's page 2 among the passages", 15_000, () =>
        app.execute<boolean>(
          "const li = [...document.querySelectorAll('[data-testid=\"trace-panel\"] .passages li')]" +
            ".find((l) => (l.querySelector('.path')?.textContent ?? '').endsWith('orchard-almanac.pdf · page 2'));" +
            " if (li) li.querySelector('button.link-button').click(); return Boolean(li);",
        ),
      );
    await openAlmanacPage2();
    await app.find('[data-testid="pdf-view"][data-rendered-page="2"]', 30_000);
    expect(await (await app.byTestId("pdf-page-label")).text()).toMatch(/Page 2 of 2/);
    const page = await app.execute<{ inked: number; width: number; boxes: { top: number; left: number; height: number }[] }>(
      "const c = document.querySelector('[data-testid=\"pdf-canvas\"]');" +
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;" +
        " let inked = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 128) inked++;" +
        " const r = c.getBoundingClientRect();" +
        " const boxes = [...document.querySelectorAll('[data-testid=\"pdf-highlight\"]')].map((b) => {" +
        "   const h = b.getBoundingClientRect();" +
        "   return { top: (h.top - r.top) / r.height, left: (h.left - r.left) / r.width, height: h.height / r.height }; });" +
        " return { inked, width: r.width, boxes };",
    );
    // Text was drawn, and the passage (the page's two short paragraphs, one
    // chunk) is highlighted line by line where it is printed: from the left
    // margin (72 of 595 points), the first baseline 82 points below the top
    // of the 842-point page, each line below the one before.
    expect(page.inked).toBeGreaterThan(500);
    expect(page.boxes.length).toBe(3);
    expect(page.boxes[0].left).toBeCloseTo(72 / 595, 1);
    expect(page.boxes[0].top).toBeGreaterThan(0.08);
    expect(page.boxes[0].top).toBeLessThan(0.1);
    expect(page.boxes[1].top).toBeGreaterThan(page.boxes[0].top);
    expect(page.boxes[2].top).toBeGreaterThan(page.boxes[1].top);
    await shot("05b-pdf-page");

    await (await app.byTestId("pdf-previous")).click();
    await app.find('[data-testid="pdf-view"][data-rendered-page="1"]', 15_000);
    expect((await app.all('[data-testid="pdf-highlight"]')).length).toBe(0);
    await (await app.byTestId("view-text")).click();
    expect(await (await app.byTestId("source-viewer")).text()).toMatch(/Medlars are eaten/);
    await closeViewer();

    // Chunks indexed before positions were kept have none (migration 5
    // leaves them NULL): the page opens with a note, not a warning that
    // the file changed.
    execFileSync("python3", [
      "-c",
      "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('UPDATE chunks SET boxes = NULL'); db.commit()",
      join(out, "home/data/folio/folio.sqlite"),
    ]);
    await openAlmanacPage2();
    await app.find('[data-testid="pdf-unrecorded"]', 30_000);
    await app.find('[data-testid="pdf-view"][data-rendered-page="2"]', 15_000);
    expect((await app.all('[data-testid="pdf-highlight"]')).length).toBe(0);
    expect((await app.all(".source-viewer .warning")).length).toBe(0);
    await shot("05c-pdf-unrecorded");
    await closeViewer();
  });

  it("renders hostile document text inert", async () => {
    await open("ask");
    await askQuestion("What does the hostile note say about mutable variables and onerror?");
    await app.waitFor("the answer to finish", 5 * MINUTE, answered);
    const trace = await app.byTestId("trace-panel");
    expect(await trace.text()).toContain("<script>");
    const state = await app.execute<{ pwned: unknown; title: string; scripts: number; handlers: number }>(
      "return { pwned: window.__pwned ?? null, title: document.title," +
        " scripts: document.querySelectorAll('main script').length," +
        " handlers: document.querySelectorAll('main [onerror], main img[src=\"x\"]').length };",
    );
    expect(state).toEqual({ pwned: null, title: "Folio", scripts: 0, handlers: 0 });
    await app.execute(
      "const hit = [...document.querySelectorAll('[data-testid=\"trace-panel\"] *')]" +
        ".find((e) => e.children.length === 0 && e.textContent.includes('<script>'));" +
        " hit && hit.scrollIntoView({ block: 'center' });",
    );
    await shot("06-hostile-inert");
  });

  it("compares two methods side by side with their costs", async () => {
    await open("compare");
    await (await app.byTestId("compare-question")).type("What is a crate?");
    await (await app.byTestId("compare-method-llm-only")).click();
    await (await app.byTestId("compare-method-vanilla-rag")).click();
    await (await app.byTestId("compare-run")).click();
    await app.waitFor("both columns to finish", 8 * MINUTE, async () => {
      return (await app.all('[data-testid="compare-column"] [data-testid="answer-status"]')).length === 2;
    });
    expect((await app.all('[data-testid="compare-column"]')).length).toBe(2);
    for (const footer of await app.all('[data-testid="compare-footer"]')) {
      expect(await footer.text()).toMatch(/^1 LLM call\b.*\b[1-9]\d* \+ [1-9]\d* tokens/s);
    }
    await shot("07-compare");
  });

  it("lists history and exports a run to the file chosen in the save dialog", async () => {
    await open("history");
    await app.byTestId("history-row", 15_000);
    expect((await app.all('[data-testid="history-row"]')).length).toBeGreaterThanOrEqual(4);
    await shot("08-history");
    const destination = join(out, "exported-run.md");
    await (await app.byTestId("history-export")).click();
    await answerSaveDialog("Export run as markdown", destination);
    await app.waitFor("the exported file", 20_000, async () => existsSync(destination));
    const markdown = readFileSync(destination, "utf8");
    expect(markdown).toMatch(/^# /m);
    expect(markdown).toMatch(/crate|mutable|hostile/i);
    await app.byTestId("toast", 10_000);
    await dismissToasts();
  });

  it("draws PAGER's page filling in slot by slot, and ActiveRAG's three agents", async () => {
    await open("ask");
    await chooseMethod("pager");
    // Room for the page's answer: SmolLM2 runs past the suite's 120-token
    // default on this question; the rest of the suite keeps the default.
    await setField("ask-max-tokens", "300");
    // Two passages a retrieval (for PAGER, and ActiveRAG below) and two
    // sections draw the same traces in a fraction of the model's time;
    // tests/ask.rs runs both methods on more.
    await setField("ask-opt-slots-max", "2");
    await setField("ask-k", "2");
    await askQuestion("How do I make a variable mutable?");
    let sawEmptySlotWhileRunning = false;
    await app.waitFor("PAGER to finish", 8 * MINUTE, async () => {
      const slots = await app.execute<{ empty: number; filled: number }>(
        "const q = (f) => document.querySelectorAll(`[data-testid=\"pager-slot\"][data-filled=\"${f}\"]`).length;" +
          " return { empty: q('false'), filled: q('true') };",
      );
      if (await answered()) return true;
      if (slots.empty > 0) sawEmptySlotWhileRunning = true;
      return false;
    });
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    expect(sawEmptySlotWhileRunning).toBe(true);
    const slots = await app.all('[data-testid="pager-slot"]');
    expect(slots.length).toBeGreaterThan(0);
    expect(await app.all('[data-testid="pager-slot"][data-filled="false"]')).toHaveLength(0);
    await (await app.find('[data-testid="pager-slot-details"] summary')).click();
    expect(await (await app.byTestId("pager-slot-details")).text()).toMatch(/Sub-query/);
    await app.execute("document.querySelector('[data-testid=\"pager-page\"]').scrollIntoView({ block: 'start' });");
    await shot("09-pager-page");

    await setField("ask-max-tokens", "");
    await chooseMethod("activerag");
    await askQuestion("What does the borrow checker prevent?");
    await app.waitFor("ActiveRAG to finish", 6 * MINUTE, answered);
    await setField("ask-k", "");
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    expect(await app.all('[data-testid="activerag-agent"]')).toHaveLength(3);
    await app.execute("document.querySelector('[data-testid=\"activerag-agents\"]').scrollIntoView({ block: 'start' });");
    await shot("10-activerag-agents");
  });

  it("draws RDR2's route through each retrieved document's tree", async () => {
    await open("ask");
    await chooseMethod("rdr2");
    // Empty fields run RDR² at its own settings, which they show.
    const placeholders = await app.execute<string[]>(
      "return ['ask-k', 'ask-temperature'].map((id) => document.getElementById(id)?.placeholder ?? 'missing');",
    );
    expect(placeholders).toEqual(["5", "0"]);
    await app.execute(
      "const k = document.getElementById('ask-k'); k.closest('details')?.setAttribute('open', ''); k.scrollIntoView({ block: 'center' });",
    );
    await shot("11a-ask-method-defaults");
    await askQuestion("How many bytes in size is Rust's char type?");
    await app.waitFor("RDR2 to finish", 6 * MINUTE, answered);
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    const routes = await app.all('[data-testid="rdr2-route"]');
    expect(routes.length).toBeGreaterThan(0);
    const outcomes = await app.execute<string[]>(
      "return [...document.querySelectorAll('[data-testid=\"rdr2-route\"]')].map((r) => r.dataset.outcome);",
    );
    for (const outcome of outcomes) expect(["selected", "refused", "fell-back"]).toContain(outcome);
    // The book's chapters have headings, so each tree has more than its passages.
    expect((await app.all('[data-testid="rdr2-node"]')).length).toBeGreaterThan(routes.length);
    expect(await app.all('[data-testid="rdr2-step"]')).toHaveLength(routes.length);
    await app.execute("document.querySelector('[data-testid=\"rdr2-route\"]').scrollIntoView({ block: 'start' });");
    await shot("11-rdr2-route");
  });

  it(
    "builds the information-gain graph from the library and draws iG²RAG's walk over it",
    async () => {
      await open("library");
      // Once in three clean runs the panel did not appear within 30 s; the
      // window as it was then is kept to find out why.
      await app.byTestId("graph-panel", 30_000).catch(async (error) => {
        await shot("12-graph-panel-missing");
        throw error;
      });
      // The form appears once the panel has read the graph's status.
      await app.byTestId("graph-rubric-select", 30_000);
      // Coarse grades with the paper's five neighbours are the defaults.
      const form = await app.execute<{ rubric: string; n: string }>(
        "return { rubric: document.querySelector('[data-testid=\"graph-rubric-select\"]').value," +
          " n: document.querySelector('[data-testid=\"graph-neighbours\"]').value };",
      );
      expect(form).toEqual({ rubric: "coarse", n: "5" });
      await (await app.byTestId("graph-build")).click();
      await app.find('[data-testid="job-row"][data-kind="gain-graph"]', 30_000);

      // Scoring the whole book takes SmolLM2 far longer than a test may
      // (one model call per chunk); a few dozen scored chunks give the walk
      // a partial graph, and cancelling the rest leaves the CPU to the tests
      // after this one (a cancelled build is not resumed by itself).
      // The first chunks scored are the first files indexed: the
      // appendices, whose keywords appendix (the 2nd to 10th chunks) the
      // question below is about.
      const ENOUGH = 16;
      type Coarse = { scored: number; pending: number; edges: number; job: string };
      const coarse = () =>
        app.execute<Coarse | null>(
          "const r = document.querySelector('[data-testid=\"graph-rubric\"][data-rubric=\"coarse\"]');" +
            " return r && { scored: Number(r.dataset.scored ?? 0), pending: Number(r.dataset.pending ?? -1)," +
            " edges: Number(r.dataset.edges ?? 0), job: r.dataset.jobState ?? '' };",
        );
      await app.waitFor(`${ENOUGH} chunks scored for the coarse graph`, 8 * MINUTE, async () => {
        const now = await coarse();
        return now !== null && (now.scored >= ENOUGH || ["done", "failed", "cancelled"].includes(now.job));
      }, 1000);
      const built = await coarse();
      expect(built?.job).not.toMatch(/failed|cancelled/);
      expect(built?.scored).toBeGreaterThan(0);
      expect(built?.edges).toBeGreaterThan(0);
      expect(await (await app.byTestId("graph-coverage")).text()).toMatch(/^[1-9][\d,]* of [\d,]+ chunks scored, /);
      if (built?.job !== "done") {
        await (await app.find('[data-testid="job-row"][data-kind="gain-graph"] [data-testid="job-cancel"]')).click();
        await app.waitFor("the graph job to stop", 2 * MINUTE, async () => (await coarse())?.job === "cancelled", 1000);
      }
      await app.execute(
        "document.querySelector('[data-testid=\"graph-panel\"]').scrollIntoView({ block: 'start' });",
      );
      await shot("12-graph-panel");

      await open("ask");
      await chooseMethod("ig2rag");
      await askQuestion("What is a raw identifier in Rust, and what syntax does it use?");
      await app.waitFor("iG²RAG to finish", 6 * MINUTE, answered);
      expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
      await app.find('[data-testid="ig2rag-graph"] svg');
      const nodes = await app.all('[data-testid="ig2rag-node"]');
      expect(nodes.length).toBeGreaterThan(0);
      expect((await app.all('[data-testid="ig2rag-node"][data-seed="true"]')).length).toBeGreaterThan(0);
      expect((await app.all('[data-testid="ig2rag-node"][data-passage]')).length).toBeGreaterThan(0);
      // The seeds lie in the scored chunks, so the walk followed gain edges.
      expect((await app.all('[data-testid="ig2rag-edge"]')).length).toBeGreaterThan(0);
      expect((await app.all('[data-testid="ig2rag-passages"] .passages li')).length).toBeGreaterThan(0);
      // Some of the graph is built, so the walk is not told it has none.
      expect(await app.all('[data-testid="ig2rag-not-built"]')).toHaveLength(0);
      // Focusing a node lights it and names its chunk, as a keyboard user would see it.
      await app.execute(
        "const g = document.querySelector('[data-testid=\"ig2rag-graph\"]'); g.scrollIntoView({ block: 'start' });" +
          " document.querySelector('[data-testid=\"ig2rag-node\"][data-seed=\"true\"]').focus();",
      );
      expect((await (await app.byTestId("ig2rag-detail", 10_000)).text()).length).toBeGreaterThan(0);
      await shot("13-ig2rag-graph");
    },
    20 * MINUTE,
  );

  it("draws a composed trace: vanilla-rag reasoning over the passages the gain walk found", async () => {
    // The graph the test above built in part is what this walk follows.
    const question = "What is a raw identifier in Rust, and what syntax does it use?";
    await open("ask");
    await chooseMethod("vanilla-rag");
    await setField("ask-opt-retriever", "ig2rag");
    await askQuestion(question);
    await app.waitFor("vanilla-rag over the gain walk to finish", 6 * MINUTE, answered);
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    const part = await app.find('[data-testid="retrieval-part"][data-retriever="ig2rag"]');
    expect((await (await app.find('[data-testid="retrieval-part"] summary')).text()).trim()).toBe(
      `Retrieved by the gain walk — for “${question}”`,
    );
    expect(await part.attribute("open")).not.toBeNull();
    expect((await app.all('[data-testid="retrieval-part"] [data-testid="ig2rag-node"]')).length).toBeGreaterThan(0);
    // The method's own half follows: the passages the walk passed on to the model.
    expect((await app.all('[data-testid="trace-panel"] .vanilla-rag > .passages li')).length).toBeGreaterThan(0);
    await app.execute("document.querySelector('[data-testid=\"retrieval-part\"]').scrollIntoView({ block: 'start' });");
    await shot("16-composed-trace");
  });

  it(
    "draws CRP-RAG's reasoning graph, each step coloured by its sufficiency check",
    async () => {
      await open("ask");
      await chooseMethod("crp-rag");
      // The full method on a small graph (two rounds, three steps) and one
      // path: each step costs the model two calls, and a small graph still
      // has what is checked below (steps, their checks, edges); tests/ask.rs
      // grows a larger one. Room for the
      // last step, since the suite's 120-token default would cut a tiny
      // model's reasoning off and fail the run.
      await setField("ask-max-tokens", "300");
      await setField("ask-opt-depth", "2");
      await setField("ask-opt-nodes", "3");
      await setField("ask-opt-paths", "1");
      await askQuestion("Which takes more bytes in Rust, a char or a bool?");
      await app.waitFor("CRP-RAG to finish", 10 * MINUTE, answered);
      expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
      await app.find('[data-testid="crp-rag-graph"] svg');
      expect(await app.all('[data-testid="crp-rag-node"][data-status="question"]')).toHaveLength(1);
      const steps = await app.all('[data-testid="crp-rag-node"]:not([data-status="question"])');
      expect(steps.length).toBeGreaterThan(0);
      // Every step hangs below the question or another step.
      expect((await app.all('[data-testid="crp-rag-edge"]')).length).toBeGreaterThanOrEqual(steps.length);
      // The full method checks every step it retrieved for.
      const checked = await app.all(
        '[data-testid="crp-rag-node"][data-status="sufficient"], [data-testid="crp-rag-node"][data-status="insufficient"]',
      );
      expect(checked.length).toBeGreaterThan(0);
      // WebKitWebDriver will not click an SVG group, so open the step the
      // way a keyboard user does: focus it and press Enter.
      await app.execute(
        "document.querySelector('[data-testid=\"crp-rag-graph\"]').scrollIntoView({ block: 'start' });" +
          " const step = arguments[0]; step.focus();" +
          " step.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));",
        { "element-6066-11e4-a52e-4f735466cecf": checked[0].id },
      );
      const detail = await app.byTestId("crp-rag-detail", 10_000);
      expect((await detail.text()).length).toBeGreaterThan(0);
      expect((await (await app.byTestId("crp-rag-verdict")).text()).trim()).toMatch(/^(sufficient|insufficient)$/);
      await shot("14-crp-rag-graph");
    },
    15 * MINUTE,
  );

  it("draws IRCoT's chain of thought, each sentence with the passages it retrieved", async () => {
    await open("ask");
    await chooseMethod("ircot");
    // Two sentences of two passages each draw the same trace in a fraction
    // of the model's time; tests/ask.rs runs the method on HotpotQA.
    await setField("ask-k", "2");
    await setField("ask-opt-max-steps", "2");
    await askQuestion("What does the borrow checker prevent?");
    await app.waitFor("IRCoT to finish", 6 * MINUTE, answered);
    await setField("ask-k", "");
    expect((await (await app.byTestId("answer-status")).text()).trim()).toBe("done");
    const trace = await app.byTestId("ircot-trace", 15_000);
    expect(await (await app.byTestId("ircot-first")).text()).toMatch(/The question retrieved \[1\]/);
    expect((await app.all('[data-testid="ircot-step"]')).length).toBeGreaterThan(0);
    expect(await trace.text()).toMatch(/Stopped/);
    await app.execute("document.querySelector('[data-testid=\"ircot-trace\"]').scrollIntoView({ block: 'start' });");
    await shot("17-ircot-trace");
  });

  it("evaluates two methods on a dataset, charts them, opens a question's runs side by side, exports the report", async () => {
    await open("evaluate");
    const evaluation = join(out, "evaluation");
    await setField("eval-dataset", env("FOLIO_E2E_DATASET"));
    await setField("eval-corpus", corpus);
    await setField("eval-out", evaluation);
    await setField("eval-limit", "2");
    await (await app.byTestId("eval-method-llm-only")).click();
    await (await app.byTestId("eval-method-vanilla-rag")).click();
    await (await app.byTestId("eval-start")).click();
    await confirmDialog();
    // The evaluation indexes the corpus into its own index first: progress shows at once.
    await app.byTestId("eval-progress", 30_000);
    await app.byTestId("eval-report", 8 * MINUTE);
    const specs = await app.execute<string[]>(
      "return [...document.querySelectorAll('[data-testid=\"eval-summary-row\"] th')].map((c) => c.textContent.trim());",
    );
    expect(specs).toEqual(["llm-only", "vanilla-rag"]);
    expect((await app.all('[data-testid="eval-chart-point"]')).length).toBe(2);
    expect((await app.all('[data-testid="eval-question"]')).length).toBe(2);
    expect(existsSync(join(evaluation, "summary.json"))).toBe(true);
    await app.execute("document.querySelector('[data-testid=\"eval-report\"]').scrollIntoView();");
    await shot("18-evaluate");

    // The two methods compared question by question, as `folio eval diff` does.
    const choice = await app.execute<string[]>(
      "return ['eval-diff-a', 'eval-diff-b', 'eval-diff-right-by'].map((id) => document.getElementById(id).value);",
    );
    expect(choice).toEqual(["llm-only", "vanilla-rag", "cover-em"]);
    await app.execute("document.querySelector('[data-testid=\"eval-diff-run\"]').scrollIntoView({ block: 'center' });");
    await (await app.byTestId("eval-diff-run")).click();
    await app.waitFor("the comparison", MINUTE, async () => {
      return (await app.all('[data-testid="eval-diff-counts"], [data-testid="eval-diff"] .error-notice')).length > 0;
    });
    const comparisonFailures = await Promise.all(
      (await app.all('[data-testid="eval-diff"] .error-notice')).map((notice) => notice.text()),
    );
    expect(comparisonFailures).toEqual([]);
    const compared = await app.execute<{ text: string; counts: Record<string, number> }>(
      "const p = document.querySelector('[data-testid=\"eval-diff-counts\"]');" +
        " return { text: p.textContent.replace(/\\s+/g, ' ').trim(), counts: Object.fromEntries(" +
        "[...p.querySelectorAll('[data-count]')].map((c) => [c.dataset.count, Number(c.textContent.replace(/[^0-9]/g, ''))])) };",
    );
    // --limit 2: both methods answered the same two questions (the job's
    // 4 / 4 below counts their four answers).
    expect(compared.text).toMatch(
      /^Compared 2 questions by Cover-EM · both right \d+ · both wrong \d+ · only llm-only right \d+ · only vanilla-rag right \d+$/,
    );
    const { counts } = compared;
    expect(counts.compared).toBe(2);
    expect(counts["both-right"] + counts["both-wrong"] + counts["only-a"] + counts["only-b"]).toBe(counts.compared);
    expect((await app.all('[data-testid="eval-diff-only-a"] [data-testid="eval-diff-parting"]')).length).toBe(counts["only-a"]);
    expect((await app.all('[data-testid="eval-diff-only-b"] [data-testid="eval-diff-parting"]')).length).toBe(counts["only-b"]);
    await app.execute("document.querySelector('[data-testid=\"eval-diff\"]').scrollIntoView();");
    await shot("18b-eval-diff");

    await (await app.byTestId("eval-question-open")).click();
    await app.waitFor("both runs side by side", 30_000, async () => {
      return (await app.all('[data-testid="eval-run-column"] [data-testid="answer-status"]')).length === 2;
    });
    await shot("19-evaluate-runs");

    const destination = join(out, "exported-evaluation.md");
    await (await app.byTestId("eval-export")).click();
    await answerSaveDialog("Export the evaluation report as markdown", destination);
    await app.waitFor("the exported report", 20_000, async () => existsSync(destination));
    const markdown = readFileSync(destination, "utf8");
    expect(markdown).toMatch(/^# Evaluation: dev\.jsonl/m);
    expect(markdown).toMatch(/^\| llm-only \| 2 \|/m);
    expect(markdown).toMatch(/^\| vanilla-rag \| 2 \|/m);

    // It ran as a job of the library: the Jobs list shows it, finished, with its answers counted.
    await open("library");
    const job = await app.find('[data-testid="job-row"][data-kind="eval"]', 30_000);
    await app.waitFor("the evaluation's job done", 30_000, async () => (await job.attribute("data-state")) === "done");
    expect(await job.text()).toMatch(/Evaluation[\s\S]*4 \/ 4/);
    await app.execute("document.querySelector('[data-testid=\"job-row\"][data-kind=\"eval\"]').scrollIntoView();");
    await shot("20-evaluation-job");
  });

  it("settings: lists the models on this computer, and one found is used without a confirmation", async () => {
    // A Hugging Face cache (scripts/e2e.sh points HF_HUB_CACHE here) holding
    // the kit's SmolLM2 the way the hub stores a download.
    const snapshot = join(out, "hf-hub", "models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF", "snapshots", "4e1f6a2");
    mkdirSync(snapshot, { recursive: true });
    const cached = join(snapshot, "SmolLM2-135M-Instruct.Q4_1.gguf");
    symlinkSync(env("FOLIO_LLM_MODEL"), cached);

    await open("settings");
    const kit = await app.find('[data-testid="kit-model"]', 10_000, async (row) => /SmolLM2/.test(await row.text()));
    expect(await kit.text()).toMatch(/SmolLM2-135M-Instruct \(Q4_1\)[\s\S]*94 MiB[\s\S]*In use/);
    const file = await app.find(`[data-testid="found-file"][data-path="${cached}"]`, 30_000);
    expect(await file.text()).toMatch(/Hugging Face cache[\s\S]*SmolLM2[\s\S]*94 MiB[\s\S]*Q4_1[\s\S]*yes/);
    await app.execute('document.querySelector("[data-testid=found-models]").scrollIntoView()');
    await shot("15a-settings-found-models");

    await (await app.find(`[data-testid="found-file"][data-path="${cached}"] [data-testid="found-model-use"]`)).click();
    expect(await app.execute<string>('return document.getElementById("model-file").value;')).toBe(cached);
    await app.byTestId("found-model-chosen");
    await app.execute('document.querySelector("[data-testid=found-model-chosen]").scrollIntoView({ block: "center" })');
    await shot("15a2-settings-found-model-chosen");
    // Found by Folio, not typed: saving asks nothing (a confirmation would
    // hold the save, and its toast would not come).
    await dismissToasts();
    await (await app.byTestId("settings-save")).click();
    await app.find('[data-testid="toast"]', 60_000, async (toast) => /Settings saved/.test(await toast.text()));
    await dismissToasts();
  });

  it("settings: key storage stated, bad input refused inline, dark theme", async () => {
    await open("settings");
    await app.byTestId("settings-backend-embedded");
    await shot("15-settings");
    // OCR is on by default, in the languages Tesseract has here (setup.sh
    // installs English).
    await app.byTestId("ocr-settings");
    await app.execute('document.querySelector("[data-testid=ocr-settings]").scrollIntoView()');
    const languages = await app.execute<string[]>(
      'return [...document.querySelectorAll("[data-testid=ocr-settings] input:checked")].map((i) => i.parentElement.textContent.trim());',
    );
    expect(languages.some((l) => l.includes("eng"))).toBe(true);
    await shot("15b-settings-ocr");
    await (await app.byTestId("settings-backend-openai")).click();
    // No session bus here, so no keyring: the fallback file must be flagged.
    const warning = await app.find("p.warning", 10_000);
    expect(await warning.text()).toMatch(/No OS keyring available.*readable only by you/);
    const url = await app.find("#base-url");
    await url.clear();
    await url.type("localhost:8080");
    await (await app.byTestId("settings-save")).click();
    const error = await app.find(".field-error", 10_000);
    expect(await error.text()).toMatch(/http:\/\//);
    await shot("16-settings-openai-invalid");
    // Listing a server's models asks the server only when the person asks;
    // with nothing listening the reason is shown beside the field.
    await url.clear();
    await url.type("http://127.0.0.1:9/v1");
    await (await app.byTestId("served-models-button")).click();
    const unlisted = await app.find('[data-testid="served-models"] .error-notice', 30_000);
    expect(await unlisted.text()).toMatch(/could not be listed[\s\S]*127\.0\.0\.1:9\/v1 is not reachable/);
    await app.execute('document.querySelector("[data-testid=served-models]").scrollIntoView({ block: "center" })');
    await shot("16b-settings-models-unlisted");
    // So is checking what it supports, for the model typed.
    const model = await app.find("#model-id");
    await model.clear();
    await model.type("qwen2.5:7b-instruct");
    await (await app.byTestId("server-support-button")).click();
    const unchecked = await app.find('[data-testid="server-support-check"] .error-notice', 30_000);
    expect(await unchecked.text()).toMatch(/could not be checked[\s\S]*127\.0\.0\.1:9\/v1 is not reachable/);
    await app.execute('document.querySelector("[data-testid=server-support-check]").scrollIntoView({ block: "center" })');
    await shot("16c-settings-support-unchecked");
    // Embeddings from a server: its URL and model id replace the model
    // folder, and its models are listed apart from the chat server's.
    await (await app.byTestId("settings-embedding-openai")).click();
    const embeddingUrl = await app.find("#embedding-url");
    await embeddingUrl.clear();
    await embeddingUrl.type("http://127.0.0.1:9/v1");
    await (await app.byTestId("embedding-served-models-button")).click();
    const embeddingUnlisted = await app.find('[data-testid="embedding-served-models"] .error-notice', 30_000);
    expect(await embeddingUnlisted.text()).toMatch(/could not be listed[\s\S]*127\.0\.0\.1:9\/v1 is not reachable/);
    expect(await app.execute<number>('return document.querySelectorAll("#embedding-dir").length;')).toBe(0);
    await app.execute('document.querySelector("[data-testid=embedding-served-models]").scrollIntoView({ block: "center" })');
    await shot("16d-settings-embedding-server");
    await (await app.find('input[name="theme"][value="dark"]')).click();
    expect(await app.execute<string>("return document.documentElement.dataset.theme;")).toBe("dark");
    await open("library");
    await shot("17-library-dark");
  });

  it("settings: serves the library to other apps, reached with the token from outside the window, and stops", async () => {
    await open("settings");
    const panel = await app.byTestId("server-panel", 15_000);
    // A fresh data folder: nothing is served until the person switches it on.
    const initially = await app.byTestId("server-status", 15_000);
    expect((await initially.text()).trim()).toBe("Off: no other app can reach this library.");
    // Port 0: the shell binds a free port, and the status names it.
    await setField("server-address", "127.0.0.1:0");
    await settled();
    await app.execute('document.querySelector("[data-testid=server-panel]").scrollIntoView()');
    await (await app.byTestId("server-switch")).click();
    await app.waitFor("the library served, or why not", 30_000, async () => {
      const status = await app.all('[data-testid="server-status"]');
      const said = status.length > 0 ? await status[0].text() : "";
      return /Serving on|not serving/.test(said) || (await app.all('[data-testid="server-panel"] .error-notice')).length > 0;
    });
    const refusals = await Promise.all(
      (await app.all('[data-testid="server-panel"] .error-notice')).map((notice) => notice.text()),
    );
    expect(refusals).toEqual([]);
    const said = (await (await app.byTestId("server-status")).text()).trim();
    const serving = /^Serving on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(said);
    expect(serving, said).not.toBeNull();
    const [, base, port] = serving!;
    expect(Number(port)).toBeGreaterThan(0);
    const field = await app.execute<{ value: string; disabled: boolean; on: boolean }>(
      'const a = document.getElementById("server-address");' +
        ' return { value: a.value, disabled: a.disabled, on: document.querySelector("[data-testid=server-switch]").checked };',
    );
    expect(field).toEqual({ value: `127.0.0.1:${port}`, disabled: true, on: true });

    // The token is hidden until Show, in the curl command too.
    expect((await (await app.byTestId("server-token")).text()).trim()).toMatch(/^•+$/);
    await (await app.byTestId("server-token-toggle")).click();
    await app.waitFor("the token shown", 10_000, async () => {
      return !/•/.test(await (await app.byTestId("server-token")).text());
    });
    const token = (await (await app.byTestId("server-token")).text()).trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    // No keyring here (no session bus): the token is kept in a file of the data folder.
    const kept = /Kept in (\/\S+\/server-token)\./.exec(await (await app.byTestId("server-token-kept")).text());
    expect(kept).not.toBeNull();
    expect(readFileSync(kept![1], "utf8").trim()).toBe(token);
    expect((await (await app.byTestId("server-openai-url")).text()).trim()).toBe(`${base}/v1`);
    expect((await (await app.byTestId("server-mcp-url")).text()).trim()).toBe(`${base}/mcp`);
    const curl = await (await app.byTestId("server-curl")).text();
    expect(curl).toContain(`Authorization: Bearer ${token}`);
    expect(curl).toContain(`${base}/api/search`);

    // A client outside the window (this test's process), as another app
    // would be: Folio's API and its methods as OpenAI-compatible models.
    const auth = { Authorization: `Bearer ${token}` };
    const status = await fetch(`${base}/api/status`, { headers: auth });
    expect(status.status).toBe(200);
    const overview = (await status.json()) as { counts: { documents: number } };
    expect(overview.counts).toBeDefined();
    expect(overview.counts.documents).toBeGreaterThan(0);
    const models = await fetch(`${base}/v1/models`, { headers: auth });
    expect(models.status).toBe(200);
    const listed = (await models.json()) as { data: { id: string }[] };
    expect(Array.isArray(listed.data)).toBe(true);
    expect(listed.data.map((m) => m.id)).toContain("folio/vanilla-rag");
    // Without the token, nothing.
    expect((await fetch(`${base}/api/status`)).status).toBe(401);
    expect((await fetch(`${base}/v1/models`, { headers: { Authorization: "Bearer not-the-token" } })).status).toBe(401);

    // Hidden again for the screenshot, as a person leaves it.
    await (await app.byTestId("server-token-toggle")).click();
    await app.waitFor("the token hidden", 10_000, async () => {
      return /^•+$/.test((await (await app.byTestId("server-token")).text()).trim());
    });
    expect(await panel.text()).not.toContain(token);
    await app.execute('document.querySelector("[data-testid=server-panel]").scrollIntoView()');
    await shot("22-server-settings");

    await (await app.byTestId("server-switch")).click();
    await app.waitFor("serving to stop", 30_000, async () => {
      return !/Serving on/.test(await (await app.byTestId("server-status")).text());
    });
    expect((await (await app.byTestId("server-status")).text()).trim()).toBe("Off: no other app can reach this library.");
    expect(await app.all('[data-testid="server-token"]')).toHaveLength(0);
    const stopped = await app.execute<{ disabled: boolean; on: boolean }>(
      'return { disabled: document.getElementById("server-address").disabled,' +
        ' on: document.querySelector("[data-testid=server-switch]").checked };',
    );
    expect(stopped).toEqual({ disabled: false, on: false });
    // The port is closed: a client is refused. (A kept-alive socket the
    // server closed may fail differently first; a fresh one is refused.)
    let refused: unknown;
    await app.waitFor("the port refused", 10_000, async () => {
      try {
        await fetch(`${base}/api/status`, { headers: auth });
        return false;
      } catch (e) {
        refused = e;
        return (e as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED";
      }
    });
    expect(refused).toBeInstanceOf(TypeError);
  });

  it("settings: calibrates the model for CRP-RAG, with progress, and keeps the threshold", async () => {
    await open("settings");
    const panel = await app.byTestId("calibrate-panel", 15_000);
    await settled();
    await app.execute('document.querySelector("[data-testid=calibrate-panel]").scrollIntoView()');
    await app.byTestId("calibrate-none", 15_000);
    await (await app.byTestId("calibrate-start")).click();
    await app.byTestId("calibrate-progress", 15_000);
    await app.waitFor("the calibration's threshold", 300_000, async () => {
      const notices = await app.all('[data-testid="calibrate-panel"] .error-notice');
      if (notices.length > 0) throw new Error(await notices[0].text());
      return (await app.all('[data-testid="calibrate-threshold"]')).length > 0 && (await app.all('[data-testid="calibrate-progress"]')).length === 0;
    });
    const threshold = Number((await (await app.byTestId("calibrate-threshold")).text()).trim());
    expect(threshold).toBeGreaterThan(1);
    expect(await panel.text()).toMatch(/sorts \d+% of probes right \(\d+% held out\)/);
    // Kept where `folio models calibrate` keeps it, for the model that answers.
    const kept = JSON.parse(readFileSync(join(out, "home", "data", "folio", "calibrations.json"), "utf8")) as Record<string, { threshold: number }>;
    expect(Object.values(kept).map((c) => c.threshold.toFixed(3))).toContain(threshold.toFixed(3));
    await shot("23-calibrated");
  });

  it("reads a notes vault: a tag scopes a search, a note shows its backlinks, a link is followed, and iG²RAG walks the links", async () => {
    // A small vault of its own: a note with front matter tags and an alias,
    // and one that links to it by name, heading and alias.
    const vault = join(out, "vault");
    mkdirSync(join(vault, ".obsidian"), { recursive: true });
    writeFileSync(join(vault, ".obsidian", "workspace.md"), "# Workspace\n\nnot a note\n");
    writeFileSync(
      join(vault, "Espalier.md"),
      "---\naliases: [Wall training]\ntags: [garden/fruit]\n---\n# Espalier\n\nTrain the pear tree flat against the warm wall. #pruning\n\n## Winter cuts\n\nCut the laterals back to three buds in January.\n",
    );
    writeFileSync(
      join(vault, "Journal.md"),
      "# Journal\n\nStarted the [[Espalier]] today, see [[Espalier#Winter cuts]] and [[Wall training|the wall]].\n",
    );
    await open("library");
    await (await app.byTestId("folder-path-input")).type(vault);
    await (await app.byTestId("add-folder-path")).click();
    await confirmDialog();
    const tagged = () => execFileSync(env("FOLIO_CLI"), ["tags", "--json"], { encoding: "utf8" });
    await app.waitFor("the vault indexed", 2 * MINUTE, async () => /garden\/fruit/.test(tagged()));

    // A search scoped to a tag finds only the tagged note.
    await open("search");
    const query = await app.byTestId("search-query", 15_000);
    await query.clear();
    await query.type("pear tree wall");
    await (await app.byTestId("scope-picker")).click();
    await (await app.find('[data-testid="scope-tag-option"][data-tag="garden/fruit"]', 15_000)).click();
    await app.find('[data-testid="scope-tag-chip"][data-tag="garden/fruit"]', 10_000);
    await app.waitFor("the tag scope counted", 15_000, async () => (await (await app.byTestId("scope-status")).text()).trim() === "1 document");
    await app.execute("document.querySelector('[data-testid=\"scope-panel\"]').scrollIntoView({ block: 'end' });");
    await shot("24-tag-scope");
    await (await app.byTestId("scope-done")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toContain("#garden/fruit");
    await searchFor("pear tree wall");
    const files = await Promise.all((await app.all('[data-testid="search-hit-file"]')).map(async (f) => (await f.text()).trim()));
    expect(files.length).toBeGreaterThan(0);
    expect(new Set(files)).toEqual(new Set(["Espalier.md"]));

    // The note opens with its tags and backlinks; a backlink is followed.
    await dismissToasts();
    await (await app.find('[data-testid="search-hit"]:first-child [data-testid="search-hit-open"]')).click();
    const links = await app.byTestId("note-links", 15_000);
    const tags = await Promise.all((await app.all('[data-testid="note-tag"]')).map((t) => t.attribute("data-tag")));
    expect(tags.sort()).toEqual(["garden/fruit", "pruning"]);
    expect(await links.text()).toContain("Aliases: Wall training");
    const backlinks = await app.all('[data-testid="backlink"]');
    expect(backlinks).toHaveLength(3);
    expect(await links.text()).toContain("Journal.md");
    await shot("25-backlinks");
    await (await app.find('[data-testid="backlink"]:first-child [data-testid="backlink-open"]')).click();
    await app.waitFor("the linking note opened", 15_000, async () => (await (await app.byTestId("source-viewer")).text()).includes("Journal.md"));
    // From Journal, the link to the heading lands on it.
    const heading = await app.find('[data-testid="outgoing-link"][data-written="Espalier#Winter cuts"] [data-testid="outgoing-link-open"]', 15_000);
    await heading.click();
    await app.waitFor("the heading opened", 15_000, async () => (await (await app.byTestId("source-viewer")).text()).includes("Cut the laterals back"));
    await shot("26-link-followed");
    await closeViewer();

    // A collection may be a tag: saved from Library, it holds the tagged note.
    await open("library");
    const panel = await app.byTestId("collections-panel", 15_000);
    await app.execute("arguments[0].scrollIntoView({ block: 'start' });", { "element-6066-11e4-a52e-4f735466cecf": panel.id });
    await (await app.byTestId("collection-name")).type("fruit");
    await (await app.find('[data-testid="collection-tag-option"][data-tag="garden/fruit"]', 15_000)).click();
    await (await app.byTestId("collection-save")).click();
    const fruit = '[data-testid="collection-row"][data-name="fruit"]';
    expect(await (await app.find(fruit, 15_000)).text()).toMatch(/\b1 documents?\b/);
    expect(await (await app.find(`${fruit} [data-testid="collection-tag"]`)).attribute("data-tag")).toBe("garden/fruit");
    await app.execute("arguments[0].scrollIntoView({ block: 'start' });", { "element-6066-11e4-a52e-4f735466cecf": panel.id });
    await shot("25b-tag-collection");
    await (await app.find(`${fruit} [data-testid="collection-delete"]`)).click();
    await (await app.byTestId("confirm-accept")).click();
    await app.waitFor("the tag collection gone", 15_000, async () => (await app.all(fruit)).length === 0);
    await dismissToasts();

    // iG²RAG's walk over the vault takes its links as edges when asked to.
    await open("ask");
    await chooseMethod("ig2rag");
    await setField("ask-opt-links", "follow");
    await (await app.byTestId("scope-picker")).click();
    await (await app.find(`[data-testid="scope-folder"][data-value="${vault}"]`, 15_000)).click();
    await app.waitFor("the vault as the scope", 15_000, async () => (await (await app.byTestId("scope-status")).text()).trim() === "2 documents");
    await (await app.byTestId("scope-done")).click();
    await askQuestion("When are the espalier's laterals cut?");
    await app.waitFor("iG²RAG over the vault to finish", 5 * MINUTE, answered);
    await app.find('[data-testid="ask-turn"]:last-of-type [data-testid="ig2rag-edge"][data-link="true"]', 15_000);
    expect(await app.all('[data-testid="ask-turn"]:last-of-type [data-testid="ig2rag-legend-class"][data-class="link"]')).toHaveLength(1);
    await app.execute("document.querySelector('[data-testid=\"ask-turn\"]:last-of-type [data-testid=\"ig2rag-graph\"]').scrollIntoView({ block: 'center' });");
    await shot("26b-walk-follows-links");
    await setField("ask-opt-links", "off");
    await (await app.byTestId("scope-picker")).click();
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");

    // Leave Search as the tests after this one expect it: the whole library.
    await open("search");
    await (await app.byTestId("scope-picker")).click();
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");
  });

  it("draws a found table passage, and an answer's cited one, as a table, its rows marked", async () => {
    // A stock list too long for one passage: it is read in row groups,
    // each under the header, and the one holding the tamarillos is found.
    const dir = join(out, "stock");
    mkdirSync(dir, { recursive: true });
    const fruit = ["Apple", "Pear", "Plum", "Cherry", "Medlar", "Damson"];
    const rows = Array.from({ length: 120 }, (_, i) =>
      i === 77 ? "| Tamarillo | 417 crates | bay 7 |" : `| ${fruit[i % fruit.length]} lot ${i} | ${i * 3} crates | bay ${i % 9} |`,
    );
    writeFileSync(join(dir, "stock.md"), `# Cold store\n\n| Fruit | Stock | Where |\n|---|---|---|\n${rows.join("\n")}\n`);
    await open("library");
    await (await app.byTestId("folder-path-input")).type(dir);
    await (await app.byTestId("add-folder-path")).click();
    await confirmDialog();
    const found = () =>
      execFileSync(env("FOLIO_CLI"), ["search", "Tamarillo", "--mode", "bm25", "--json", "-k", "1"], { encoding: "utf8" });
    await app.waitFor("the stock list indexed", 2 * MINUTE, async () => /stock\.md/.test(found()));

    await open("search");
    const query = await app.byTestId("search-query", 15_000);
    await query.clear();
    await query.type("Tamarillo 417 crates");
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");
    // Words, not meaning: the book's passages on crates would outrank it.
    await (await app.find('[data-testid="search-mode"] option[value="bm25"]')).click();
    await searchFor("Tamarillo 417 crates");
    const hitRows = await app.find('[data-testid="search-hit"]:first-child [data-testid="search-hit-rows"]', 10_000);
    expect(await hitRows.text()).toMatch(/^rows \d+–\d+$/);
    await dismissToasts();
    await (await app.find('[data-testid="search-hit"]:first-child [data-testid="search-hit-open"]')).click();
    await app.byTestId("source-table", 15_000);
    const headers = await Promise.all((await app.all('[data-testid="source-table"] th')).map(async (th) => (await th.text()).trim()));
    expect(headers).toEqual(["Fruit", "Stock", "Where"]);
    const cited = await Promise.all((await app.all('[data-testid="cited-row"]')).map(async (r) => (await r.text()).trim()));
    expect(cited.length).toBeGreaterThan(1);
    expect(cited.some((row) => row.startsWith("Tamarillo"))).toBe(true);
    expect((await app.all('[data-testid="source-table"] tbody tr')).length).toBe(120);
    await shot("27-cited-table");
    await closeViewer();

    // An answer citing the list opens its cited rows the same way: Ask,
    // scoped to the list, so whatever the answer cites is a row group.
    await open("ask");
    await chooseMethod("vanilla-rag");
    await (await app.byTestId("scope-picker")).click();
    await (await app.byTestId("scope-path-input")).type(join(dir, "stock.md"));
    await (await app.byTestId("scope-path-add")).click();
    const scoped = async () => (await (await app.byTestId("scope-status")).text()).trim() === "1 document";
    await app.waitFor("the list as the scope", 15_000, scoped);
    await (await app.byTestId("scope-done")).click();
    await askQuestion("Where are the tamarillos kept?");
    await app.waitFor("the answer to finish", 5 * MINUTE, answered);
    const citations = await app.all('[data-testid="ask-turn"]:last-of-type [data-testid="citation"]');
    expect(citations.length).toBeGreaterThan(0);
    await citations[0].click();
    await app.byTestId("source-table", 15_000);
    const answerHeaders = await Promise.all((await app.all('[data-testid="source-table"] th')).map(async (th) => (await th.text()).trim()));
    expect(answerHeaders).toEqual(["Fruit", "Stock", "Where"]);
    const answerRows = await Promise.all((await app.all('[data-testid="cited-row"]')).map(async (r) => (await r.text()).trim()));
    expect(answerRows.length).toBeGreaterThan(1);
    expect(answerRows.filter((row) => !/\d+ crates/.test(row))).toEqual([]);
    await shot("27b-answer-cited-table");
    await closeViewer();
    await (await app.byTestId("scope-picker")).click();
    await (await app.byTestId("scope-clear")).click();
    await (await app.byTestId("scope-done")).click();
    expect(await (await app.byTestId("scope-summary")).text()).toBe("Whole library");
  });

  it("shows a file that stopped Folio as set aside in Library, and retries it", async () => {
    const dir = join(out, "set-aside");
    mkdirSync(dir, { recursive: true });
    for (const i of [1, 2, 3]) writeFileSync(join(dir, `note-${i}.md`), `# Note ${i}\n\nPlums, ${i} of them.\n`);
    writeFileSync(join(dir, "zz-bad.md"), "# Bad\n\nNothing wrong with these words.\n");
    await open("library");
    // The CLI reads the folder, not the app: this test build of it dies on
    // the file as FOLIO_FAULT says, as a loader bug would, and a start
    // after that sets the file aside.
    await (await app.byTestId("pause-jobs")).click();
    const fault = { ...process.env, FOLIO_FAULT: "read:abort:zz-bad.md" };
    for (let run = 1; ; run++) {
      try {
        execFileSync(env("FOLIO_CLI"), ["add", dir], { env: fault, stdio: "ignore" });
        break;
      } catch (e) {
        if (run === 3) throw e;
      }
    }
    await (await app.byTestId("resume-jobs")).click();
    const row = await app.find('[data-testid="file-error"][data-set-aside="true"]', 30_000);
    expect(await row.text()).toMatch(/Folio stopped while reading this file; `folio retry .*zz-bad\.md` tries again/);
    await app.execute("document.querySelector('[data-testid=\"file-error\"]').scrollIntoView({ block: 'center' });");
    await shot("19-set-aside");
    await (await app.byTestId("retry-file")).click();
    await app.waitFor("the retried file indexed", 2 * MINUTE, async () =>
      (await app.all('[data-testid="file-error"][data-set-aside="true"]')).length === 0,
    );
    await shot("19b-set-aside-retried");
  });

  it("opens a PDF whose name is not UTF-8 from Library by its real bytes, the name shown with a replacement character", async () => {
    const dir = join(out, "names");
    mkdirSync(dir, { recursive: true });
    // Node writes a Buffer path's bytes as they are: a Latin-1 é, not UTF-8.
    const file = Buffer.concat([Buffer.from(`${dir}/ledger-`), Buffer.from([0xe9]), Buffer.from(".pdf")]);
    writeFileSync(file, textPdf("Harbour ledger", [["The harbour ledger records forty barrels of herring."]]));
    await open("library");
    const before = await number("overview-documents");
    execFileSync(env("FOLIO_CLI"), ["add", dir], { stdio: "ignore" });
    // The CLI indexed it; the app hears that the library changed.
    await app.waitFor("the overview to count it", 30_000, async () => (await number("overview-documents")) === before + 1);
    await app.waitFor("the folder listed", 60_000, () =>
      app.execute<boolean>(
        "const row = [...document.querySelectorAll('[data-testid=\"folder-row\"]')]" +
          ".find((r) => (r.querySelector('.path')?.textContent ?? '').endsWith('/names'));" +
          " if (row) row.querySelector('[data-testid=\"folder-documents-toggle\"]').click(); return Boolean(row);",
      ),
    );
    // The row is keyed by the engine's lossless text of the name (the byte
    // 0xE9 as U+F7E9) and shows it as U+FFFD.
    const selector = '[data-testid="document-row"][data-path$="/ledger-\uf7e9.pdf"]';
    const row = await app.find(selector, 30_000);
    expect(await row.text()).toContain("ledger-\ufffd.pdf");
    await app.execute(`document.querySelector('${selector}').scrollIntoView({ block: 'center' });`);
    await shot("19d-name-not-utf8");
    await app.execute(`document.querySelector('${selector} button.link-button').click();`);
    await app.find('[data-testid="pdf-view"][data-rendered-page="1"]', 30_000);
    expect(await (await app.byTestId("source-viewer")).text()).toContain("ledger-\ufffd.pdf");
    await shot("19e-name-not-utf8-pdf");
    await closeViewer();
  });

  it("shows a watched folder gone from the disk as missing, with its documents kept", async () => {
    // The set-aside test's folder, unmounted as far as Folio can tell.
    const dir = join(out, "set-aside");
    const away = join(out, "set-aside-away");
    await open("library");
    const before = await number("overview-documents");
    renameSync(dir, away);
    const badge = await app.find('[data-testid="folder-missing"]', 60_000);
    expect(await badge.text()).toBe("Missing: documents kept");
    expect(await number("overview-documents")).toBe(before);
    await app.execute("document.querySelector('[data-testid=\"folder-missing\"]').scrollIntoView({ block: 'center' });");
    await shot("19c-folder-missing");
    renameSync(away, dir);
    await app.waitFor("the folder back", 2 * MINUTE, async () =>
      (await app.all('[data-testid="folder-missing"]')).length === 0,
    );
    expect(await number("overview-documents")).toBe(before);
  });

  it("closing the window mid-ingest stops cleanly, and the job resumes on the next start", async () => {
    const hotpotqa = writeHotpotqaFolder(env("FOLIO_E2E_HOTPOTQA"), join(out, "hotpotqa"));
    await open("library");
    const before = await number("overview-documents");
    await (await app.byTestId("folder-path-input")).type(hotpotqa.dir);
    await (await app.byTestId("add-folder-path")).click();
    await confirmDialog();
    await app.waitFor("the new folder to be ingesting", 4 * MINUTE, async () => {
      return (await number("overview-documents")) > before + 100;
    });
    await closeAppWindow();
    // The job the add made (a reconcile of every folder may have been
    // queued beside it, when the folder of the test before came back).
    const added = (j: Job) => j.payload.roots.length === 1 && j.payload.roots[0] === hotpotqa.dir;
    const stopped = findJob(`for ${hotpotqa.dir}`, added);
    expect(stopped).toMatchObject({ state: "queued", interrupted: false });
    expect(stopped.done).toBeGreaterThan(0);
    expect(stopped.done).toBeLessThan(stopped.total);

    await startApp();
    const same = (j: Job) => j.id === stopped.id;
    await app.waitFor("the same job to go on", 4 * MINUTE, async () => findJob(`#${stopped.id}`, same).done > stopped.done, 2000);
    await closeAppWindow();
    expect(findJob(`#${stopped.id}`, same)).toMatchObject({ state: "queued", interrupted: false });
  });
});
