// The classifier against the server's own: the generated table matches
// ai_bots.json, every row of the Go tests' user-agent table
// (internal/enrich/bots/testdata/user_agents.tsv) gets the same answer, and
// the category labels are the strings bots.go returns.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without declarations.
import { allowlistPath, outputPath, render } from "../scripts/gen-bots.mjs";
import { allowlist } from "../src/bots.gen";
import { categoryLabel, classifyBot, isAiBot } from "../src/bots";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const botsDir = join(repo, "internal", "enrich", "bots");

interface Row {
  want: string;
  ua: string;
}

/** rows reads user_agents.tsv the way bots_test.go does. */
function rows(): Row[] {
  return readFileSync(join(botsDir, "testdata", "user_agents.tsv"), "utf8")
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const tab = line.indexOf("\t");
      if (tab < 0) throw new Error(`malformed row ${line}`);
      return { want: line.slice(0, tab), ua: line.slice(tab + 1) };
    });
}

describe("the generated allowlist", () => {
  it("is what scripts/gen-bots.mjs makes of ai_bots.json (run npm run gen-bots)", () => {
    expect(readFileSync(outputPath, "utf8")).toBe(render(readFileSync(allowlistPath, "utf8")));
  });

  it("has every bot of ai_bots.json, in order", () => {
    const file = JSON.parse(readFileSync(join(botsDir, "ai_bots.json"), "utf8"));
    expect(allowlist.map(([token, name, operator, category]) => ({ token, name, operator, category }))).toEqual(
      file.bots.map((b: Record<string, string>) => ({ token: b.token, name: b.name, operator: b.operator, category: b.category })),
    );
  });

  it("refuses what the Go classifier's New refuses", () => {
    for (const bad of [
      `{`,
      `{"version":1,"bots":[]}`,
      `{"bots":[{"name":"x","category":"ai_crawler"}]}`,
      `{"bots":[{"token":"x","name":"x","category":"search"}]}`,
      `{"bots":[{"token":"X","name":"x","category":"ai_crawler"},{"token":"x","name":"y","category":"ai_crawler"}]}`,
      `{"bots":[{"token":"Kangaroo Bot","name":"x","category":"ai_crawler"}]}`,
      `{"bots":[{"token":"Känguru","name":"x","category":"ai_crawler"}]}`,
    ]) {
      expect(() => render(bad), bad).toThrow();
    }
  });
});

describe("classifyBot, on the server's test table", () => {
  const table = rows();

  it("has the table (at least 60 rows, as bots_test.go requires)", () => {
    expect(table.length).toBeGreaterThanOrEqual(60);
  });

  it.each(table)("$want: $ua", ({ want, ua }) => {
    const bot = classifyBot(ua);
    expect(bot?.name ?? "-").toBe(want);
    expect(isAiBot(ua)).toBe(want !== "-");
  });

  it("covers every allowlist entry with a real user agent", () => {
    const covered = new Set(table.map((r) => classifyBot(r.ua)?.name).filter(Boolean));
    for (const [, name] of allowlist) expect(covered, name).toContain(name);
  });
});

describe("classifyBot", () => {
  const gptbot = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";

  it("returns the bot's name, operator, category and label", () => {
    expect(classifyBot(gptbot)).toEqual({ name: "GPTBot", operator: "OpenAI", category: "ai_crawler", categoryLabel: "AI crawler (training/index)" });
    expect(classifyBot("Mozilla/5.0 (compatible; ChatGPT-User/1.0; +https://openai.com/bot)")).toMatchObject({
      name: "ChatGPT-User",
      category: "ai_assistant",
      categoryLabel: "AI assistant (live fetch)",
    });
  });

  it.each([
    ["tab", "Mozilla/5.0\tClaudeBot/1.0", "ClaudeBot"],
    ["comma", "x,ClaudeBot", "ClaudeBot"],
    ["parenthesis", "(ClaudeBot)", "ClaudeBot"],
    ["upper case", "CLAUDEBOT/1.0", "ClaudeBot"],
    ["token at the end, no version", "Mozilla/5.0 ClaudeBot", "ClaudeBot"],
    ["only the first slash ends the name", "ClaudeBot/1.0/2.0", "ClaudeBot"],
    ["a URL path is no product", "Mozilla/5.0 https://example.com/ClaudeBot", "-"],
    ["a longer name", "ClaudeBotX", "-"],
    ["a colon is no separator", "x:ClaudeBot", "-"],
    ["a non-breaking space is no separator", "x\u00a0ClaudeBot", "-"],
    ["a newline is no separator", "x\nClaudeBot", "-"],
    // U+212A KELVIN SIGN lower-cases to "k" in JavaScript ("facebookbot"), not in Go's byte-wise fold.
    ["no Unicode case folding", "Faceboo\u212ABot/1.0", "-"],
    ["no Unicode case folding after the slash either", "x/\u212A FacebookBot/1.0", "FacebookBot"],
  ])("%s", (_, ua, want) => {
    expect(classifyBot(ua)?.name ?? "-").toBe(want);
  });

  it("would go wrong with toLowerCase: the Kelvin sign case above is real", () => {
    expect("Faceboo\u212ABot".toLowerCase()).toBe("facebookbot");
  });

  it("returns null, without throwing, for anything that is no bot's user agent", () => {
    const huge = "Mozilla/5.0 (X11; Linux) ".repeat(40_000); // 1 MB of pieces
    const inputs: unknown[] = [
      "",
      " ",
      ";;;(),",
      "/",
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
      "x".repeat(1 << 20),
      huge,
      "Мозилла/5.0 (Линукс) 日本語のユーザーエージェント 😀",
      "\ud800GPTBot",
      "\u0000",
      undefined,
      null,
      42,
      {},
      ["GPTBot"],
    ];
    for (const ua of inputs) {
      expect(() => classifyBot(ua as string)).not.toThrow();
      expect(classifyBot(ua as string)).toBeNull();
      expect(isAiBot(ua as string)).toBe(false);
    }
  });

  it("finds a bot at the end of a 1 MB user agent", () => {
    const t = performance.now();
    expect(classifyBot("a ".repeat(1 << 19) + "GPTBot/1.0")?.name).toBe("GPTBot");
    expect(performance.now() - t).toBeLessThan(500);
  });

  it("finds a bot after non-ASCII pieces", () => {
    expect(classifyBot("日本語 😀; GPTBot/1.2")?.name).toBe("GPTBot");
  });
});

describe("categoryLabel", () => {
  it("says what bots.go's CategoryLabel says", () => {
    const src = readFileSync(join(botsDir, "bots.go"), "utf8");
    for (const [constant, category] of [["CategoryAssistant", "ai_assistant"], ["CategoryCrawler", "ai_crawler"]]) {
      const m = src.match(new RegExp(`case ${constant}:\\s*return "([^"]+)"`));
      expect(m, constant).not.toBeNull();
      expect(categoryLabel(category)).toBe(m![1]);
      expect(src).toContain(`${constant}${" ".repeat(constant === "CategoryCrawler" ? 3 : 1)}= "${category}"`);
    }
    expect(categoryLabel("other")).toBe("other");
  });
});
