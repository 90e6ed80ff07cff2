// The markdown subset of message bodies: what it renders, and that a body
// can never create an element, handler or link the subset does not allow.
import { describe, expect, it } from "vitest";
import { render, safeURL } from "../src/messages/markdown";

/** html renders a body into a <div> and returns its markup, for comparing only. */
function html(body: string, format = "markdown"): string {
  const d = document.createElement("div");
  d.append(render(body, format));
  return d.innerHTML;
}

/** every element a body produced, and every attribute on them. */
function inventory(body: string) {
  const d = document.createElement("div");
  d.append(render(body, "markdown"));
  const els = Array.from(d.querySelectorAll("*"));
  return { tags: els.map((e) => e.tagName.toLowerCase()), attrs: els.flatMap((e) => Array.from(e.attributes, (a) => a.name)) };
}

describe("render", () => {
  it.each([
    ["a paragraph", "Hello there", "<p>Hello there</p>"],
    ["paragraphs at blank lines", "One\n\nTwo\n \nThree", "<p>One</p><p>Two</p><p>Three</p>"],
    ["line breaks", "One\r\nTwo", "<p>One<br>Two</p>"],
    ["bold, italic and code", "**b** *i* `c *d*`", "<p><strong>b</strong> <em>i</em> <code>c *d*</code></p>"],
    ["italic in bold", "**a *b* c**", "<p><strong>a <em>b</em> c</strong></p>"],
    ["a list", "Steps:\n- one\n- **two**\n\nAfter", "<p>Steps:</p><ul><li>one</li><li><strong>two</strong></li></ul><p>After</p>"],
    ["a path link", "[Start](/start?x=1)", '<p><a href="https://shop.example.com/start?x=1">Start</a></p>'],
    ["an https link, in a new tab", "[Docs](https://docs.example.com/a)", '<p><a href="https://docs.example.com/a" target="_blank" rel="noopener noreferrer">Docs</a></p>'],
    ["a mailto link", "[Mail](mailto:help@example.com)", '<p><a href="mailto:help@example.com">Mail</a></p>'],
    ["unclosed marks as text", "a ** b * c ` d [e](", "<p>a ** b * c ` d [e](</p>"],
    ["headings and quotes as text", "# Title\n> quote", "<p># Title<br>&gt; quote</p>"],
  ])("renders %s", (_, body, want) => {
    expect(html(body)).toBe(want);
  });

  it("shows text bodies as written", () => {
    expect(html("**not bold**\n\n<b>x</b>", "text")).toBe("<p>**not bold**\n\n&lt;b&gt;x&lt;/b&gt;</p>");
  });

  it.each([
    "<script>window.pwned = 1</script>",
    '<img src=x onerror="window.pwned = 1">',
    '<a href="javascript:alert(1)">x</a>',
    "<svg onload=alert(1)></svg>",
    "[x](javascript:alert(1))",
    "[x](JavaScript:alert(1))",
    "[x]( javascript:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](data:text/html,<script>alert(1)</script>)",
    "[x](vbscript:msgbox)",
    "**[x](javascript:alert(1))**",
    "- <iframe src=javascript:alert(1)>",
  ])("never creates other elements or handlers from %s", (body) => {
    const { tags, attrs } = inventory(body);
    expect(tags.filter((t) => !["p", "br", "strong", "em", "code", "ul", "li", "span"].includes(t))).toEqual([]);
    expect(attrs).toEqual([]);
    expect((window as { pwned?: number }).pwned).toBeUndefined();
  });

  it("keeps a refused link's text", () => {
    expect(html("[click me](javascript:alert(1))")).toBe("<p><span>click me</span></p>");
  });
});

describe("safeURL", () => {
  it.each([
    ["/start", "https://shop.example.com/start"],
    ["  /a b", "https://shop.example.com/a%20b"],
    ["https://x.example.com/", "https://x.example.com/"],
    ["HTTP://x.example.com", "http://x.example.com/"],
    ["mailto:a@example.com", "mailto:a@example.com"],
    ["javascript:alert(1)", ""],
    [" JAVASCRIPT:alert(1)", ""],
    ["\u0001javascript:alert(1)", ""],
    ["data:text/html,x", ""],
    ["ftp://x.example.com", ""],
    ["relative/path", ""],
    ["", ""],
  ])("%j → %j", (url, want) => {
    expect(safeURL(url)).toBe(want);
  });
});
