import { afterEach, describe, expect, it } from "vitest";
import { BreakdownCard } from "../src/components/BreakdownCard";
import { Acquisition } from "../src/pages/Acquisition";
import type { TrendResult } from "../src/types";
import { click, fakeFetch, mount, settle } from "./helpers";

const product = { id: 1, workspaceId: 1, name: "Shop", createdAt: "2026-11-01T00:00:00Z" };
const range = { key: "custom" as const, from: "2026-10-27", to: "2026-11-25" };

/** breakdown answers a trend broken down into the given values. */
function breakdown(values: Record<string, number>): TrendResult {
  return {
    interval: "month",
    series: Object.entries(values).map(([v, n]) => ({
      event: "$pageview",
      label: `$pageview: ${v}`,
      breakdownValue: v,
      data: [{ date: "2026-11-01", value: n }],
    })),
  } as TrendResult;
}

afterEach(() => history.replaceState(null, "", "/"));

describe("sources", () => {
  it("lists the top sources without same-site visits, and opens a source's full referrers", async () => {
    const calls = fakeFetch({
      "POST /api/v1/query/trend": (call) => {
        const body = call.body as { breakdown: string };
        return { body: body.breakdown === "source" ? breakdown({ Google: 7, ChatGPT: 3 }) : breakdown({ "https://www.google.com/": 5, "https://www.google.de/": 2 }) };
      },
    });
    const root = await mount(
      <BreakdownCard product={1} from="2026-10-27" to="2026-11-25" env="live" property="source" title="Top sources" heading="Source"
        filters={[{ property: "source", operator: "is_set" }]} detail={{ property: "referrer", heading: "Referrer" }} />,
    );
    const first = calls[0].body as { breakdown: string; filters: unknown[]; series: { event: string }[] };
    expect(first.breakdown).toBe("source");
    expect(first.filters).toEqual([{ property: "source", operator: "is_set" }]);
    expect(first.series[0].event).toBe("$pageview");
    const google = [...root.querySelectorAll("button")].find((b) => b.textContent === "Google")!;
    expect(google.getAttribute("aria-expanded")).toBe("false");
    await click(google);
    expect(google.getAttribute("aria-expanded")).toBe("true");
    const detail = calls[1].body as { breakdown: string; filters: unknown[] };
    expect(detail.breakdown).toBe("referrer");
    expect(detail.filters).toEqual([{ property: "source", operator: "is_set" }, { property: "source", operator: "eq", value: "Google" }]);
    const rows = [...root.querySelectorAll("table[aria-label='Referrer of Google'] tbody tr")].map((r) => r.textContent);
    expect(rows).toEqual(["https://www.google.com/5", "https://www.google.de/2"]);
  });

  it("shows channels, sources and UTM tags by visitors on Acquisition, with the AI bots kept", async () => {
    const calls = fakeFetch({
      "POST /api/v1/query/trend": (call) => {
        const by = (call.body as { breakdown: string }).breakdown;
        return { body: by === "channel" ? breakdown({ ai: 4, search: 9, direct: 2 }) : breakdown({}) };
      },
      "GET /api/v1/query/bots": { body: { bots: [], topPages: [] } },
    });
    const root = await mount(<Acquisition product={product} range={range} env="live" />);
    await settle();
    const asked = calls.filter((c) => c.path === "/api/v1/query/trend").map((c) => c.body as { breakdown: string; series: { math: string }[] });
    expect(asked.map((b) => b.breakdown)).toEqual(["channel", "source", "utm_source", "utm_medium", "utm_campaign"]);
    expect(asked.every((b) => b.series[0].math === "unique_users")).toBe(true);
    const channels = [...root.querySelectorAll("table[aria-label='Channels'] tbody tr")].map((r) => r.textContent);
    expect(channels).toEqual(["Search9", "AI assistants4", "Direct2"]);
    expect(root.querySelector("table[aria-label='Channels'] th.num")?.textContent).toBe("Visitors");
    expect(root.textContent).toContain("No page view carried utm_campaign in this range.");
    expect(root.querySelector("#bots-title")?.textContent).toBe("AI bot activity");
  });

  it("opens the channel and source the URL names on Acquisition, and writes the one clicked as a new entry", async () => {
    history.replaceState(null, "", "/acquisition?product=1&channel=search&source=Google");
    const entries = history.length;
    const calls = fakeFetch({
      "POST /api/v1/query/trend": (call) => {
        const by = (call.body as { breakdown: string }).breakdown;
        return { body: by === "channel" ? breakdown({ ai: 4, search: 9 }) : by === "source" ? breakdown({ Google: 9, ChatGPT: 4 }) : breakdown({}) };
      },
      "GET /api/v1/query/bots": { body: { bots: [], topPages: [] } },
    });
    const root = await mount(<Acquisition product={product} range={range} env="live" />);
    await settle();
    const expanded = () => [...root.querySelectorAll("button[aria-expanded=true]")].map((b) => b.textContent);
    expect(expanded()).toEqual(["Search", "Google"]);
    const details = calls.filter((c) => c.path === "/api/v1/query/trend").map((c) => (c.body as { filters: { property: string; value?: string }[] }).filters.at(-1));
    expect(details).toContainEqual({ property: "channel", operator: "eq", value: "search" });
    expect(details).toContainEqual({ property: "source", operator: "eq", value: "Google" });
    await click([...root.querySelectorAll("button")].find((b) => b.textContent === "AI assistants")!);
    expect(new URLSearchParams(location.search).get("channel")).toBe("ai");
    expect(history.length).toBe(entries + 1);
    await click([...root.querySelectorAll("button")].find((b) => b.textContent === "Google")!);
    expect(new URLSearchParams(location.search).has("source")).toBe(false);
    expect(expanded()).toEqual(["AI assistants"]);
  });
});
