import type { ComponentChildren, VNode } from "preact";

// A safe subset of Markdown, for the descriptions of api/openapi.yaml:
// paragraphs, bullet and numbered lists, pipe tables, fenced code blocks,
// and inline `code`, **strong**, *emphasis* and [links](https://…). It
// builds elements, never HTML from text: whatever the text holds (a
// <script>, an onclick, a javascript: link) is shown as text. A link
// keeps only an http(s), mailto, same-site (/…) or fragment (#…) address.

/** Markdown renders text as the subset above. */
export function Markdown(props: { text: string; class?: string }) {
  if (!props.text.trim()) return null;
  return <div class={props.class ? `markdown ${props.class}` : "markdown"}>{blocks(props.text)}</div>;
}

const fence = /^\s*```/;
const bullet = /^(\s*)[-*+]\s+(.*)$/;
const numbered = /^(\s*)\d+[.)]\s+(.*)$/;
const tableRow = /^\s*\|.*\|\s*$/;
const tableRule = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

/** blocks splits text into block elements. */
function blocks(text: string): VNode[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: VNode[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    if (fence.test(line)) {
      const code: string[] = [];
      for (i++; i < lines.length && !fence.test(lines[i]); i++) code.push(lines[i]);
      i++; // the closing fence
      out.push(
        <pre key={out.length}>
          <code>{code.join("\n")}</code>
        </pre>,
      );
      continue;
    }
    if (tableRow.test(line) && i + 1 < lines.length && tableRule.test(lines[i + 1])) {
      const head = cells(line);
      const rows: string[][] = [];
      for (i += 2; i < lines.length && tableRow.test(lines[i]); i++) rows.push(cells(lines[i]));
      out.push(
        <div class="table-scroll" key={out.length}>
          <table class="table compact">
            <thead>
              <tr>
                {head.map((h, j) => (
                  <th key={j}>{inline(h)}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, k) => (
                <tr key={k}>
                  {head.map((_, j) => (
                    <td key={j}>{inline(r[j] ?? "")}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>,
      );
      continue;
    }
    const list = bullet.exec(line) ? bullet : numbered.exec(line) ? numbered : null;
    if (list) {
      const items: string[] = [];
      while (i < lines.length) {
        const m = list.exec(lines[i]);
        if (m) {
          items.push(m[2]);
        } else if (lines[i].trim() && /^\s+/.test(lines[i]) && items.length) {
          items[items.length - 1] += " " + lines[i].trim(); // a continuation line, indented
        } else break;
        i++;
      }
      const children = items.map((item, k) => <li key={k}>{inline(item)}</li>);
      out.push(list === bullet ? <ul key={out.length}>{children}</ul> : <ol key={out.length}>{children}</ol>);
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && lines[i].trim() && !fence.test(lines[i]) && !bullet.test(lines[i]) && !numbered.test(lines[i]) &&
      !(tableRow.test(lines[i]) && i + 1 < lines.length && tableRule.test(lines[i + 1]))) {
      para.push(lines[i].trim());
      i++;
    }
    out.push(<p key={out.length}>{inline(para.join(" "))}</p>);
  }
  return out;
}

/** cells splits a table row on unescaped pipes outside code spans. */
function cells(row: string): string[] {
  const s = row.trim().replace(/^\|/, "").replace(/\|$/, "");
  const out: string[] = [];
  let cur = "";
  let code = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "\\" && s[i + 1] === "|") {
      cur += "|";
      i++;
    } else if (c === "`") {
      code = !code;
      cur += c;
    } else if (c === "|" && !code) {
      out.push(cur.trim());
      cur = "";
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

/** safeHref returns href when it is an address a link may keep, else null. */
export function safeHref(href: string): string | null {
  const h = href.trim();
  if (/^https?:\/\//i.test(h) || /^mailto:/i.test(h) || (h.startsWith("/") && !h.startsWith("//")) || h.startsWith("#")) return h;
  return null;
}

/** inline renders code spans, then strong, emphasis and links outside them. */
function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  // A code span runs from a run of backticks to the next run of the same length.
  const re = /(`+)([\s\S]*?[^`])\1(?!`)/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(...marks(text.slice(last, m.index)));
    out.push(<code>{m[2].replace(/^ (.*) $/, "$1")}</code>);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(...marks(text.slice(last)));
  return out;
}

/** marks renders **strong**, *emphasis* and [links](…) in text without code spans. */
function marks(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const re = /\*\*(.+?)\*\*|\*([^\s*](?:[^*]*[^\s*])?)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(<strong>{marks(m[1])}</strong>);
    else if (m[2] !== undefined) out.push(<em>{marks(m[2])}</em>);
    else {
      const href = safeHref(m[4]);
      out.push(href ? <a href={href} rel="noopener noreferrer">{marks(m[3])}</a> : m[0]);
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
