// The time charts stop at now: buckets still to come are not drawn as 0.
// Chart.js is replaced by a stand-in that keeps what it was given, and the
// clock is fixed, so the cut-off is exact.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { pastBuckets, untilNow } from "../src/charts/time";
import { TimeChart } from "../src/charts/TimeChart";
import { mount } from "./helpers";

/** The charts the stand-in was asked to draw. */
const drawn = vi.hoisted(() => [] as { data: { labels: unknown[]; datasets: { label: string; data: (number | null)[] }[] } }[]);

vi.mock("chart.js", () => {
  class Chart {
    static register() {}
    data: unknown;
    options: unknown;
    scales = {};
    constructor(_el: unknown, config: { data: unknown; options: unknown }) {
      this.data = config.data;
      this.options = config.options;
      drawn.push(this as never);
    }
    update() {}
    destroy() {}
  }
  return { Chart, BarController: {}, BarElement: {}, CategoryScale: {}, Legend: {}, LinearScale: {}, LineController: {}, LineElement: {}, PointElement: {}, Tooltip: {} };
});

const hours = (day: string, n: number) => Array.from({ length: n }, (_, h) => `${day}T${String(h).padStart(2, "0")}:00:00Z`);

describe("charts stop at now", () => {
  // "Today" at 14:20 UTC: hours 00–14 have begun, 15–23 are still to come.
  const now = Date.parse("2026-11-23T14:20:00Z");

  it("keeps the buckets that have begun, the current one included", () => {
    const today = hours("2026-11-23", 24);
    expect(pastBuckets(today, now)).toBe(15);
    expect(pastBuckets(today, Date.parse("2026-11-23T14:00:00Z"))).toBe(15);
    expect(pastBuckets(today, Date.parse("2026-11-23T13:59:59.999Z"))).toBe(14);
    expect(pastBuckets(today, Date.parse("2026-11-22T23:00:00Z"))).toBe(0);
    expect(pastBuckets(["2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"], now)).toBe(3);
    // A week or a month that has begun is drawn, partial as it is.
    expect(pastBuckets(["2026-11-09", "2026-11-16", "2026-11-23"], now)).toBe(3);
    expect(pastBuckets(["2026-10-01", "2026-11-01", "2026-12-01"], now)).toBe(2);
    expect(untilNow([4, 0, 2, 0], ["2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"], now)).toEqual([4, 0, 2, null]);
  });

  describe("TimeChart", () => {
    beforeEach(() => {
      drawn.length = 0;
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(now);
      vi.spyOn(HTMLCanvasElement.prototype, "getContext").mockReturnValue({} as never);
    });
    afterEach(() => vi.useRealTimers());

    it("draws today's hours still to come as gaps, not zeros, and leaves them out of the table", async () => {
      const buckets = hours("2026-11-23", 24);
      const views = buckets.map((_, h) => (h < 15 ? h + 1 : 0));
      const root = await mount(<TimeChart kind="line" interval="hour" buckets={buckets} lines={[{ label: "Page views", data: views }]} label="Page views today" />);
      const data = drawn[drawn.length - 1].data.datasets[0].data;
      expect(data.slice(0, 15)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
      expect(data.slice(15)).toEqual(Array(9).fill(null));
      expect(drawn[drawn.length - 1].data.labels).toHaveLength(24);
      const rows = [...root.querySelectorAll(".data-table tbody tr")];
      expect(rows).toHaveLength(15);
      expect(rows[14].querySelector("td:last-child")?.textContent).toBe("15");
      expect(root.querySelector("[data-testid=future-hint]")?.textContent).toBe("The chart stops at the current hour: the rest of the range is still to come.");
    });

    it("draws every bucket of a range that has ended, with its zeros", async () => {
      const buckets = ["2026-11-20", "2026-11-21", "2026-11-22"];
      const root = await mount(<TimeChart kind="bar" interval="day" buckets={buckets} lines={[{ label: "Signups", data: [3, 0, 0] }]} label="Signups" />);
      expect(drawn[drawn.length - 1].data.datasets[0].data).toEqual([3, 0, 0]);
      expect(root.querySelectorAll(".data-table tbody tr")).toHaveLength(3);
      expect(root.querySelector("[data-testid=future-hint]")).toBeNull();
    });
  });
});
