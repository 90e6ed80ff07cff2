/**
 * The message bodies' markdown subset (docs/messages.md): paragraphs, line
 * breaks, **bold**, *italic*, `code`, [links](url) and `- ` lists; nothing else
 * has a meaning. It is rendered with createElement and textContent only, never
 * innerHTML, so a body cannot create an element the subset does not name, nor
 * set an attribute other than a checked link's href: raw HTML shows as text.
 */

/** safeURL returns `url` resolved against the page when it is http:, https:, mailto: or a path starting with "/", else "". */
export function safeURL(url: string): string {
  try {
    url = url.trim();
    // A path resolves to the page's own scheme; anything else must name an allowed one.
    const u = new URL(url, location.href);
    if (url[0] == "/" || (/^(https?|mailto):/i.test(url) && /^(https?|mailto):$/.test(u.protocol))) return u.href;
  } catch {
    // Not a URL at all.
  }
  return "";
}

/** render returns a body as nodes: `text` as written, `markdown` as the subset. */
export function render(body: string, format: string): DocumentFragment {
  const f = document.createDocumentFragment();
  if (format != "markdown") {
    const p = el("p");
    p.textContent = body;
    f.append(p);
    return f;
  }
  // Blocks are separated by blank lines; in a block, runs of "- " lines are lists
  // and the other lines paragraphs, their line ends line breaks.
  for (const block of body.replace(/\r\n?/g, "\n").split(/\n[ \t]*\n/)) {
    let parent: HTMLElement | undefined;
    for (const line of block.split("\n")) {
      if (!line.trim()) continue;
      const item = /^\s*- (.*)$/.exec(line);
      if (item) {
        if (!parent || parent.tagName != "UL") f.append((parent = el("ul")));
        parent.append(inline(el("li"), item[1]));
      } else {
        if (!parent || parent.tagName != "P") f.append((parent = el("p")));
        else parent.append(el("br"));
        inline(parent, line);
      }
    }
  }
  return f;
}

/**
 * inline appends the spans of `s` to `parent`: code first (its content is
 * literal), then bold, italic and links, which may nest. An opening mark
 * without its closing one is text, and so is a mark with a space inside it
 * (`a * b * c`). A link's URL may hold one level of balanced parentheses.
 */
function inline(parent: HTMLElement, s: string): HTMLElement {
  let text = "";
  const put = (node: Node) => {
    if (text) parent.append(text);
    text = "";
    parent.append(node);
  };
  for (let i = 0; i < s.length; ) {
    if (!"`*[".includes(s[i])) {
      text += s[i++];
      continue;
    }
    const rest = s.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^`([^`]+)`/.exec(rest))) {
      const code = el("code");
      code.textContent = m[1];
      put(code);
    } else if ((m = /^\*\*(?!\s)(.+?)(?<!\s)\*\*/.exec(rest))) {
      put(inline(el("strong"), m[1]));
    } else if ((m = /^\*(?!\s)([^*]+?)(?<!\s)\*/.exec(rest))) {
      put(inline(el("em"), m[1]));
    } else if ((m = /^\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))*)\)/.exec(rest))) {
      const href = safeURL(m[2]);
      if (href) {
        const a = el("a") as HTMLAnchorElement;
        a.href = href;
        // Other sites open in a new tab; the site's own paths and mail in place.
        if (/^https?:/i.test(m[2])) {
          a.target = "_blank";
          a.rel = "noopener noreferrer";
        }
        put(inline(a, m[1]));
      } else {
        // A link with another scheme is its text, as the server stores it.
        put(inline(el("span"), m[1]));
      }
    } else {
      text += s[i++];
      continue;
    }
    i += m[0].length;
  }
  if (text) parent.append(text);
  return parent;
}

function el(tag: string): HTMLElement {
  return document.createElement(tag);
}
