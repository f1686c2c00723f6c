// The only place untrusted markdown (model answers) becomes HTML. markdown-it
// parses with raw HTML off, citation markers become buttons, and DOMPurify
// then keeps an allowlist of tags and attributes, so whatever a model or a
// document smuggles into an answer comes out inert under the app's CSP.
import DOMPurify from "dompurify";
import MarkdownIt, { type StateInline } from "markdown-it";
import { parseCitationGroup } from "./citations";

const OPEN_BRACKET = 0x5b;
const OPEN_PAREN = 0x28;
const GROUP = /^\[([^\]\n]{1,80})\]/;

function citationRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== OPEN_BRACKET) return false;
  const match = GROUP.exec(state.src.slice(state.pos, state.posMax));
  if (!match) return false;
  // `[1](https://…)` is a link whose text happens to be a number.
  if (state.src.charCodeAt(state.pos + match[0].length) === OPEN_PAREN) return false;
  const numbers = parseCitationGroup(match[1]);
  if (!numbers) return false;
  if (!silent) {
    const token = state.push("citation", "", 0);
    token.meta = { numbers };
  }
  state.pos += match[0].length;
  return true;
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.inline.ruler.before("link", "citation", citationRule);
// An image would be fetched by the webview (a tracking pixel) or decoded
// from a data: URI of any size; answers have no business loading anything.
// The image keeps only its alt text, and its URL never reaches the page.
md.renderer.rules.image = (tokens, idx, options, env) => {
  const alt = md.renderer.renderInlineAsText(tokens[idx].children ?? [], options, env);
  return `<span class="image-placeholder">[image${alt ? `: ${md.utils.escapeHtml(alt)}` : ""}]</span>`;
};
md.renderer.rules.citation = (tokens, idx) => {
  const numbers = tokens[idx].meta.numbers as number[];
  const buttons = numbers.map(
    (n) => `<button type="button" class="cite" data-cite="${n}" aria-label="Open source ${n}">${n}</button>`,
  );
  return `<span class="cite-group">[${buttons.join(", ")}]</span>`;
};

const ALLOWED_TAGS = [
  "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "code",
  "em", "strong", "s", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
  "span", "button",
];
const ALLOWED_ATTR = ["href", "title", "class", "type", "start", "data-cite", "aria-label"];
// DOMPurify checks every attribute not listed here against the URI pattern,
// which would reject plain values such as `data-cite="2"`.
const NON_URI_ATTR = ["type", "start", "data-cite"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName !== "A") return;
  // Links never navigate the webview: the URL is shown as a tooltip only.
  const href = node.getAttribute("href");
  node.removeAttribute("href");
  if (href) node.setAttribute("title", href);
  node.setAttribute("rel", "noopener noreferrer");
  node.setAttribute("class", "inert-link");
});

/** Renders untrusted markdown to sanitised HTML with citation buttons. */
export function renderMarkdown(source: string): string {
  return DOMPurify.sanitize(md.render(source), {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ADD_URI_SAFE_ATTR: NON_URI_ATTR,
    ALLOW_DATA_ATTR: false,
    ALLOWED_URI_REGEXP: /^(?:https?|mailto):/i,
  });
}
