// The Overview's Goals card against the previous period (issue 37, items 5
// and 7): each goal's conversion rate shows its change in percentage points
// against the period of the same length before the range, "new" when that
// period had no visitors, and nothing while it has no such goal.
import { describe, expect, it } from "vitest";
import { Goals, rateChange } from "../src/components/Goals";
import type { GoalsResult } from "../src/types";
import { fakeFetch, mount, type Call } from "./helpers";

type Goal = GoalsResult["goals"][number];
const goal = (id: number, name: string, visitors: number, conversionRate: number): Goal => ({
  id,
  kind: "event",
  event: name,
  name,
  visitors,
  conversions: visitors,
  conversionRate,
});

describe("Goals card changes", () => {
  it("asks for the previous period of the same length and shows each rate's change", async () => {
    const current: GoalsResult = { visitors: 10, goals: [goal(1, "signup", 5, 50), goal(2, "purchase", 1, 10), goal(3, "added", 2, 20)] };
    const before: GoalsResult = { visitors: 8, goals: [goal(1, "signup", 2, 25), goal(2, "purchase", 1, 12.5)] };
    const calls = fakeFetch({
      "POST /api/v1/query/goals": (c: Call) => {
        const b = c.body as { dateFrom: string; dateTo: string };
        return { body: b.dateFrom === "2026-11-21" ? current : before };
      },
    });
    const root = await mount(<Goals product={3} from="2026-11-21" to="2026-11-27" env="live" />);
    const asked = calls.filter((c) => c.path === "/api/v1/query/goals").map((c) => (c.body as { dateFrom: string; dateTo: string }));
    expect(asked.map((b) => `${b.dateFrom}..${b.dateTo}`).sort()).toEqual(["2026-11-14..2026-11-20", "2026-11-21..2026-11-27"]);
    const rows = [...root.querySelectorAll("[data-testid=goal-row]")];
    const shown = rows.map((r) => {
      const c = r.querySelector<HTMLElement>("[data-testid=goal-change]");
      return c ? [c.querySelector("[aria-hidden]")!.textContent, c.dataset.direction, c.querySelector(".visually-hidden")!.textContent] : null;
    });
    expect(shown).toEqual([
      ["↑ +25 pp", "up", "up 25 percentage points from the previous 7 days"],
      ["↓ \u22122.5 pp", "down", "down 2.5 percentage points from the previous 7 days"],
      null, // a goal the previous period's answer does not have
    ]);
    expect(rows[0].querySelector(".change-good")).not.toBeNull();
    expect(rows[1].querySelector(".change-bad")).not.toBeNull();
  });

  it("says new when the previous period had no visitors, and no change at the same rate", () => {
    const cur: GoalsResult = { visitors: 4, goals: [goal(1, "signup", 1, 25)] };
    expect(rateChange(cur, { visitors: 0, goals: [goal(1, "signup", 0, 0)] }, 1, "the previous day")?.text).toBe("new");
    expect(rateChange(cur, { visitors: 8, goals: [goal(1, "signup", 2, 25)] }, 1, "the previous day")).toMatchObject({ text: "0 pp", direction: "flat" });
    expect(rateChange(cur, null, 1, "the previous day")).toBeNull();
  });

  it("asks nothing for either period under an entry or exit page filter", async () => {
    const calls = fakeFetch({ "POST /api/v1/query/goals": { body: { visitors: 0, goals: [] } } });
    await mount(<Goals product={3} from="2026-11-21" to="2026-11-27" env="live" visitFilter="entry page" />);
    expect(calls.filter((c) => c.path === "/api/v1/query/goals")).toEqual([]);
  });
});
