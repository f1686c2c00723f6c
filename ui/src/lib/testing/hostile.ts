// The one set of hostile payloads every renderer test feeds in where
// document text or model output reaches the DOM, and the one check of what
// "rendered inert" means. Documents and model replies are untrusted: a
// payload here that gets through anywhere is a bug in that renderer.
import { expect } from "vitest";
import type { Citation } from "$lib/bindings/Citation";
import type { RunRecord } from "$lib/bindings/RunRecord";

/** Set by the payloads' scripts; a renderer that lets one run sets it. */
const PWNED = "window.__pwned=1";

/** Base64 of a `data:` image of about two megabytes. */
const HUGE_BASE64 = "iVBORw0KGgo".padEnd(2 * 1024 * 1024, "A");

export type HostilePayload = {
  name: string;
  text: string;
  /** Words of the payload that must still be on screen once it is rendered. */
  visible: string;
};

export const HOSTILE_PAYLOADS: readonly HostilePayload[] = [
  { name: "script tag", text: `<script>${PWNED}</script>script-tag`, visible: "script-tag" },
  { name: "image with onerror", text: `<img src=x onerror="${PWNED}">img-onerror`, visible: "img-onerror" },
  { name: "svg with onload", text: `<svg onload="${PWNED}"><circle r="9"/></svg>svg-onload`, visible: "svg-onload" },
  {
    name: "iframe, object and embed",
    text: `<iframe src="https://evil.example/" srcdoc="<script>${PWNED}</script>"></iframe><object data="https://evil.example/x"></object><embed src="https://evil.example/y">frames`,
    visible: "frames",
  },
  { name: "markdown javascript: link", text: `[md-js-link](javascript:${PWNED})`, visible: "md-js-link" },
  {
    name: "markdown data:text/html link",
    text: "[md-data-link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)",
    visible: "md-data-link",
  },
  { name: "markdown vbscript: link", text: "[md-vb-link](vbscript:msgbox(1))", visible: "md-vb-link" },
  { name: "markdown autolink", text: `<javascript:${PWNED}> autolink`, visible: "autolink" },
  {
    name: "markdown reference link",
    text: `[md-ref-link][evil]\n\n[evil]: javascript:${PWNED}`,
    visible: "md-ref-link",
  },
  { name: "html javascript: link", text: `<a href="javascript:${PWNED}">html-js-link</a>`, visible: "html-js-link" },
  {
    name: "html data:text/html link",
    text: `<a href="data:text/html,<script>${PWNED}</script>">html-data-link</a>`,
    visible: "html-data-link",
  },
  { name: "style tag", text: "<style>body { display: none }</style>style-tag", visible: "style-tag" },
  {
    name: "text hidden by display:none",
    text: '<span style="display:none">hidden-display</span>',
    visible: "hidden-display",
  },
  { name: "text hidden by font-size:0", text: '<span style="font-size:0">hidden-font</span>', visible: "hidden-font" },
  {
    name: "text coloured like the background",
    text: '<span style="color:#fff;background:#fff">hidden-colour</span>',
    visible: "hidden-colour",
  },
  {
    name: "text moved off screen",
    text: '<div style="position:absolute;left:-9999px">hidden-offscreen</div>',
    visible: "hidden-offscreen",
  },
  { name: "remote image", text: "![remote-image](https://evil.example/pixel.png)", visible: "remote-image" },
  { name: "huge data: image", text: `![huge-image](data:image/png;base64,${HUGE_BASE64})`, visible: "huge-image" },
  {
    name: "form",
    text: '<form action="https://evil.example/"><input name="q"><button>form-send</button></form>',
    visible: "form-send",
  },
  {
    name: "meta refresh",
    text: '<meta http-equiv="refresh" content="0;url=https://evil.example/">meta-refresh',
    visible: "meta-refresh",
  },
  {
    name: "base and stylesheet links",
    text: '<base href="https://evil.example/"><link rel="stylesheet" href="https://evil.example/x.css">base-link',
    visible: "base-link",
  },
  {
    name: "entities that decode into tags",
    text: `&lt;script&gt;${PWNED}&lt;/script&gt; &#60;img src=x onerror=${PWNED}&#62; &amp;lt;b&amp;gt;entities`,
    visible: "entities",
  },
  {
    name: "mutation XSS through foreign content",
    text: `<math><mtext><table><mglyph><style><img src=x onerror="${PWNED}">mxss</style></mglyph></table></mtext></math>`,
    visible: "mxss",
  },
];

const HUGE = HOSTILE_PAYLOADS.find((p) => p.name === "huge data: image")!;
/** What {@link HOSTILE} is made of. */
const FIELD_PAYLOADS = HOSTILE_PAYLOADS.filter((p) => p !== HUGE);

/**
 * Every payload in one text, for the many fields a renderer fills, but the
 * megabytes-long image: only markdown could make an image of it, and the
 * answer tests render it there ({@link HOSTILE_ANSWER}); as plain text in
 * every field of a trace it would only slow the tests down.
 */
export const HOSTILE = FIELD_PAYLOADS.map((p) => p.text).join("\n\n");

/** A model's answer carrying every payload, with a citation after them that must still work. */
export const HOSTILE_ANSWER = `${HOSTILE}\n\n${HUGE.text}\n\nAs the source says [1].`;

/** A stored run whose every text field is hostile: what History, Compare and Evaluate show. */
export function hostileRun(trace: RunRecord["trace"] = null, method = "vanilla-rag"): RunRecord {
  const citation: Citation = {
    number: 1,
    path: `/notes/${HOSTILE_PAYLOADS[0].text}.md`,
    heading_path: HOSTILE,
    span_start: 0,
    span_end: 10,
    page: null,
    chunk_id: 1,
  };
  return {
    id: 1,
    thread_id: 1,
    turn: null,
    question: HOSTILE,
    method,
    // A scope names folders, collections and tags the library's documents and people named.
    scope: { paths: [`/notes/${HOSTILE_PAYLOADS[1].text}`], collections: [HOSTILE], formats: ["pdf"], since: "2026-01-31", tags: [HOSTILE] },
    params: {},
    model: {},
    status: "failed",
    answer: HOSTILE_ANSWER,
    citations: [citation],
    trace,
    error: HOSTILE,
    timings: { total_ms: 1000 },
    llm_calls: 1,
    prompt_tokens: 10,
    cached_tokens: 0,
    completion_tokens: 5,
    created_at: 0,
    finished_at: 0,
  };
}

const FORBIDDEN_ELEMENTS = [
  "script", "iframe", "frame", "object", "embed", "style", "link", "base", "meta", "form",
  "img", "image", "picture", "video", "audio", "source", "foreignObject",
].join(", ");
const URL_ATTRIBUTES = ["href", "xlink:href", "src", "srcset", "action", "formaction", "data", "poster"];
const RUNNABLE_URL = /^\s*(?:javascript|vbscript|data):/i;

/**
 * Nothing under `root` can run, load or hide anything: no element that
 * executes, embeds, navigates or restyles the page, no event handler or
 * inline style attribute, no URL that is code, and no script has run.
 * `root` must be the part of the view that shows untrusted text (a view's
 * own search box or form is not).
 */
export function expectInert(root: Element): void {
  expect([...root.querySelectorAll(FORBIDDEN_ELEMENTS)].map((el) => el.tagName)).toEqual([]);
  for (const el of root.querySelectorAll("*")) {
    for (const attr of el.getAttributeNames()) {
      expect(attr.startsWith("on"), `${el.tagName} has ${attr}`).toBe(false);
      expect(attr, `${el.tagName} has ${attr}`).not.toBe("style");
      expect(attr, `${el.tagName} has ${attr}`).not.toBe("srcdoc");
    }
    for (const attr of URL_ATTRIBUTES) {
      expect(el.getAttribute(attr) ?? "", `${el.tagName} ${attr}`).not.toMatch(RUNNABLE_URL);
    }
  }
  expect((window as unknown as { __pwned?: unknown }).__pwned).toBeUndefined();
}

/**
 * The payloads' own words are on screen: nothing hostile made them vanish.
 * `payloads` defaults to those in {@link HOSTILE}.
 */
export function expectVisible(root: Element, payloads: readonly HostilePayload[] = FIELD_PAYLOADS): void {
  const text = root.textContent ?? "";
  for (const payload of payloads) expect(text, payload.name).toContain(payload.visible);
}
