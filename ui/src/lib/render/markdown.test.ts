import { describe, expect, it } from "vitest";
import { expectInert, HOSTILE_PAYLOADS } from "$lib/testing/hostile";
import { parseCitationGroup } from "./citations";
import { renderMarkdown } from "./markdown";

function dom(html: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = html;
  return root;
}

describe("renderMarkdown sanitising", () => {
  for (const payload of HOSTILE_PAYLOADS) {
    it(`neutralises ${payload.name} and keeps its text`, () => {
      const root = dom(renderMarkdown(`Before\n\n${payload.text}\n\nafter *${payload.text}* [1]`));
      expectInert(root);
      expect(root.textContent).toContain(payload.visible);
      expect(root.querySelector("button.cite"), "the citation after it still works").not.toBeNull();
    });
  }

  it("never puts an image's URL on the page, only its alt text", () => {
    const root = dom(renderMarkdown("![a chart](https://evil.example/pixel.png) and ![](data:image/png;base64,AAAA)"));
    expect([...root.querySelectorAll(".image-placeholder")].map((e) => e.textContent)).toEqual([
      "[image: a chart]",
      "[image]",
    ]);
    expect(root.innerHTML).not.toMatch(/evil\.example|data:/);
  });

  it("shows raw HTML as text instead of dropping it", () => {
    const root = dom(renderMarkdown("<script>alert(1)</script>"));
    expect(root.textContent).toContain("<script>alert(1)</script>");
  });

  it("keeps ordinary markdown", () => {
    const root = dom(renderMarkdown("# Title\n\nSome **bold** and `code`.\n\n- a\n- b"));
    expect(root.querySelector("h1")?.textContent).toBe("Title");
    expect(root.querySelector("strong")?.textContent).toBe("bold");
    expect(root.querySelectorAll("li").length).toBe(2);
  });

  it("makes links inert and shows their URL as a title", () => {
    const root = dom(renderMarkdown("[docs](https://example.com/a) and [mail](mailto:a@b.c)"));
    const links = root.querySelectorAll("a");
    expect(links.length).toBe(2);
    expect(links[0].hasAttribute("href")).toBe(false);
    expect(links[0].getAttribute("title")).toBe("https://example.com/a");
    expect(links[0].getAttribute("rel")).toContain("noopener");
    expect(links[1].getAttribute("title")).toBe("mailto:a@b.c");
  });

  it("drops links with other schemes entirely", () => {
    const root = dom(renderMarkdown("[f](file:///etc/passwd) [v](vbscript:x)"));
    for (const a of root.querySelectorAll("a")) expect(a.getAttribute("title") ?? "").not.toMatch(/file:|vbscript:/);
  });
});

describe("citation buttons", () => {
  function cites(markdown: string): string[] {
    return [...dom(renderMarkdown(markdown)).querySelectorAll("button.cite")].map(
      (b) => b.getAttribute("data-cite") ?? "",
    );
  }

  it("turns single, grouped, adjacent and ranged markers into buttons", () => {
    expect(cites("A [1].")).toEqual(["1"]);
    expect(cites("B [2, 3].")).toEqual(["2", "3"]);
    expect(cites("C [1][4].")).toEqual(["1", "4"]);
    expect(cites("D [2-3].")).toEqual(["2", "3"]);
    expect(cites("E [5–7]; F [8; 9]")).toEqual(["5", "6", "7", "8", "9"]);
  });

  it("keeps data-cite through the sanitiser and labels the button", () => {
    const button = dom(renderMarkdown("See [2].")).querySelector("button.cite");
    expect(button?.getAttribute("type")).toBe("button");
    expect(button?.textContent).toBe("2");
  });

  it("leaves non-citations, links, escapes and code alone", () => {
    expect(cites("[see below] and [x, 1] and [1")).toEqual([]);
    expect(cites("[1](https://example.com)")).toEqual([]);
    expect(cites("\\[1] literally")).toEqual([]);
    expect(cites("`[1]` and\n\n    [2] in code")).toEqual([]);
  });

  it("works inside emphasis and lists", () => {
    expect(cites("- *fact [3]*\n- other [4]")).toEqual(["3", "4"]);
  });
});

describe("parseCitationGroup", () => {
  it("parses numbers and ranges", () => {
    expect(parseCitationGroup("1")).toEqual([1]);
    expect(parseCitationGroup(" 2 , 3 ")).toEqual([2, 3]);
    expect(parseCitationGroup("2-4")).toEqual([2, 3, 4]);
  });

  it("rejects anything else", () => {
    expect(parseCitationGroup("")).toBeNull();
    expect(parseCitationGroup("a")).toBeNull();
    expect(parseCitationGroup("4-2")).toBeNull();
    expect(parseCitationGroup("1-99")).toBeNull();
  });
});
