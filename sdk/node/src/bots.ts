import { allowlist } from "./bots.gen.js";

/** The two categories of AI bots, as Strata stores them. */
export type BotCategory = "ai_assistant" | "ai_crawler";

/** An AI bot of Strata's allowlist, as `classifyBot` returns it. */
export interface BotInfo {
  /** What Strata stores as `$bot_name`, e.g. `GPTBot`. */
  readonly name: string;
  /** Who runs the bot, e.g. `OpenAI`. */
  readonly operator: string;
  /** `ai_assistant` (fetches a page live for a user) or `ai_crawler` (training or indexing). */
  readonly category: BotCategory;
  /** How the dashboard shows the category. */
  readonly categoryLabel: string;
}

/**
 * categoryLabel is the display text of a category, the same as the server's
 * bots.CategoryLabel (internal/enrich/bots/bots.go).
 */
export function categoryLabel(category: string): string {
  switch (category) {
    case "ai_assistant":
      return "AI assistant (live fetch)";
    case "ai_crawler":
      return "AI crawler (training/index)";
  }
  return category;
}

// The lower-cased token of each bot, and the shortest and longest token:
// a product name of another length cannot match, so it is never copied.
const byToken = new Map<string, BotInfo>();
let minLen = Infinity;
let maxLen = 0;
for (const [token, name, operator, category] of allowlist) {
  byToken.set(token.toLowerCase(), Object.freeze({ name, operator, category, categoryLabel: categoryLabel(category) }));
  minLen = Math.min(minLen, token.length);
  maxLen = Math.max(maxLen, token.length);
}

/**
 * classifyBot returns the AI bot whose product token is one of the user
 * agent's product names, or null for anything else (people, search engines,
 * other crawlers, and anything that is not a string).
 *
 * The rule is the server's (`Classifier.Classify` in
 * internal/enrich/bots/bots.go), so that what the middleware sends is what
 * ingest turns into `$bot_pageview`: the user agent is cut into pieces at
 * space, tab, `;`, `(`, `)` and `,`; each piece loses its `/version`; a
 * piece matches a token when they are equal ignoring ASCII case. Whole
 * pieces only: `GPTBot/1.2` is GPTBot, `NotGPTBot/1.0` and a URL ending in
 * `/gptbot` are not. Only ASCII letters are folded (Go folds byte by byte),
 * so a piece with any other character never matches: `toLowerCase` would
 * turn the Kelvin sign into `k`, Go does not.
 *
 * It never throws, and costs one pass over the string. The objects it returns
 * are shared and frozen.
 */
export function classifyBot(userAgent: string | null | undefined): BotInfo | null {
  if (typeof userAgent !== "string") return null;
  const n = userAgent.length;
  let start = 0;
  while (start < n) {
    // The piece is [start, end); its product name is [start, slash).
    let end = start;
    let slash = -1;
    let ascii = true;
    for (; end < n; end++) {
      const c = userAgent.charCodeAt(end);
      if (c === 32 || c === 9 || c === 59 || c === 40 || c === 41 || c === 44) break;
      if (slash < 0) {
        if (c === 47) slash = end;
        else if (c > 127) ascii = false;
      }
    }
    const stop = slash < 0 ? end : slash;
    const len = stop - start;
    if (ascii && len >= minLen && len <= maxLen) {
      const bot = byToken.get(userAgent.slice(start, stop).toLowerCase());
      if (bot) return bot;
    }
    start = end + 1;
  }
  return null;
}

/** isAiBot reports whether the user agent is one of Strata's AI bots (classifyBot is not null). */
export function isAiBot(userAgent: string | null | undefined): boolean {
  return classifyBot(userAgent) !== null;
}
