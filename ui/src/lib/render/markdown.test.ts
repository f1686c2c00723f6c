import { describe, expect, it } from "vitest";
import { parseCitationGroup } from "./citations";
import { renderMarkdown } from "./markdown";

function dom(html: string): HTMLElement {
  const root = document.createElement("div");
  root.innerHTML = html;
  return root;
}

function assertInert(html: string) {
  const root = dom(html);
  expect(root.querySelectorAll("script, iframe, style, img, object, embed, form").length).toBe(0);
  for (const el of root.querySelectorAll("*")) {
    for (const attr of el.getAttributeNames()) {
      expect(attr.startsWith("on"), `${el.tagName} has ${attr}`).toBe(false);
      expect(attr).not.toBe("style");
    }
    expect(el.getAttribute("href") ?? "").not.toMatch(/javascript:/i);
  }
}

describe("renderMarkdown sanitising", () => {
  const attacks = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    '<a href="javascript:alert(1)">click</a>',
    "<style>body { display: none }</style>",
    '<iframe src="https://example.com"></iframe>',
    "![pixel](https://tracker.example/p.png)",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<div style=\"color:red\" onclick=\"alert(1)\">x</div>",
  ];
  for (const attack of attacks) {
    it(`neutralises ${attack}`, () => {
      const html = renderMarkdown(`Before\n\n${attack}\n\nafter *${attack}*`);
      assertInert(html);
    });
  }

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
