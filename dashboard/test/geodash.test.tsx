import { describe, expect, it } from "vitest";
import { countryFlag, countryName, Countries } from "../src/components/Countries";
import { Devices } from "../src/components/Devices";
import type { FilterRequest, TrendResult } from "../src/types";
import { byText, click, fakeFetch, mount, type Call } from "./helpers";

/** breakdown is a trend broken down by a property: one line per value, its count in one month. */
function breakdown(values: [string, number][]): TrendResult {
  return {
    interval: "month",
    series: values.map(([v, n]) => ({ event: "$pageview", label: "$pageview", breakdownValue: v, data: [{ date: "2026-11-01", value: n }] })),
  } as TrendResult;
}

/** asked is what a trend call broke down by and filtered on. */
const asked = (c: Call) => c.body as { breakdown: string; filters: FilterRequest[]; series: { math: string }[] };

const rows = (root: HTMLElement, label: string) =>
  [...root.querySelectorAll(`table[aria-label='${label}'] > tbody > tr:not(.detail-row)`)].map((r) => [...r.querySelectorAll(":scope > td")].map((td) => td.textContent));

describe("country names", () => {
  it("are English names by ISO code, with the flag; the empty value is Unknown", () => {
    expect([countryName("NL"), countryName("US"), countryName("DE"), countryName(""), countryName("(none)")]).toEqual([
      "Netherlands",
      "United States",
      "Germany",
      "Unknown",
      "Unknown",
    ]);
    expect(countryFlag("NL")).toBe("\u{1F1F3}\u{1F1F1}");
    expect(countryFlag("")).toBe("");
    // A value that is no ISO code is shown as it is, and throws nothing.
    expect(countryName("not a code")).toBe("not a code");
  });
});

describe("the Countries card", () => {
  const props = { product: 1, from: "2026-11-21", to: "2026-11-27", env: "live" as const };

  it("ranks visitors by country name, credits DB-IP, and says regions need a City database when the database has none", async () => {
    const calls = fakeFetch({
      "GET /api/v1/dashboard/config": { body: { setupRequired: false, features: { errorTracking: false }, geoAttribution: true } },
      "POST /api/v1/query/trend": (call) => {
        const { breakdown: by } = asked(call);
        if (by === "country") return { body: breakdown([["US", 3], ["", 2], ["NL", 4]]) };
        if (by === "region") return { body: breakdown([["", 4]]) };
        return { status: 500, body: { error: { code: "internal", message: "unexpected" } } };
      },
    });
    const root = await mount(<Countries {...props} />);
    const countries = calls.find((c) => c.path === "/api/v1/query/trend" && asked(c).breakdown === "country")!;
    expect(asked(countries).series[0].math).toBe("unique_users");
    expect(rows(root, "Countries")).toEqual([
      ["\u{1F1F3}\u{1F1F1} Netherlands", "4"],
      ["\u{1F1FA}\u{1F1F8} United States", "3"],
      ["Unknown", "2"],
    ]);
    // The flag is for the eye: the button's name is the country's.
    expect(byText(root, "button", "Netherlands")).toBeTruthy();
    // Unknown is no single country to open.
    expect(byText(root, "button", "Unknown")).toBeUndefined();
    const link = root.querySelector<HTMLAnchorElement>("a[href='https://db-ip.com']");
    expect(link?.textContent).toBe("IP Geolocation by DB-IP");

    await click(byText(root, "button", "Netherlands"));
    const regions = calls.find((c) => c.path === "/api/v1/query/trend" && asked(c).breakdown === "region")!;
    expect(asked(regions).filters).toEqual([{ property: "country", operator: "eq", value: "NL" }]);
    expect(root.querySelector(".detail-row")?.textContent).toBe("Regions and cities need a City database (--geoip-db).");
    expect(root.querySelector("table[aria-label='Region of Netherlands']")).toBeNull();
  });

  it("opens a country's regions and a region's cities with a City database, and credits no one for it", async () => {
    const calls = fakeFetch({
      "GET /api/v1/dashboard/config": { body: { setupRequired: false, features: { errorTracking: false }, geoAttribution: false } },
      "POST /api/v1/query/trend": (call) => {
        const { breakdown: by } = asked(call);
        if (by === "country") return { body: breakdown([["DE", 3]]) };
        if (by === "region") return { body: breakdown([["Bavaria", 2], ["Berlin", 1]]) };
        if (by === "city") return { body: breakdown([["Munich", 2]]) };
        return { status: 500, body: { error: { code: "internal", message: "unexpected" } } };
      },
    });
    const root = await mount(<Countries {...props} />);
    expect(root.querySelector("a[href='https://db-ip.com']")).toBeNull();
    await click(byText(root, "button", "Germany"));
    expect(rows(root, "Region of Germany")).toEqual([
      ["Bavaria", "2"],
      ["Berlin", "1"],
    ]);
    await click(byText(root, "button", "Bavaria"));
    const cities = calls.find((c) => c.path === "/api/v1/query/trend" && asked(c).breakdown === "city")!;
    expect(asked(cities).filters).toEqual([
      { property: "country", operator: "eq", value: "DE" },
      { property: "region", operator: "eq", value: "Bavaria" },
    ]);
    expect(rows(root, "City of Bavaria")).toEqual([["Munich", "2"]]);
  });

  it("credits DB-IP in a shared link's view, which cannot ask the dashboard config", async () => {
    const calls = fakeFetch({ "POST /api/v1/query/trend": { body: breakdown([["NL", 1]]) } });
    const root = await mount(<Countries {...props} readOnly />);
    expect(root.querySelector("a[href='https://db-ip.com']")).toBeTruthy();
    expect(calls.some((c) => c.path === "/api/v1/dashboard/config")).toBe(false);
  });
});

describe("the Devices card", () => {
  it("shows browsers first, and each tab's breakdown with its values named", async () => {
    const calls = fakeFetch({
      "POST /api/v1/query/trend": (call) => {
        const by = asked(call).breakdown;
        if (by === "browser") return { body: breakdown([["Chrome", 5], ["Firefox", 2]]) };
        if (by === "os") return { body: breakdown([["Linux", 7]]) };
        if (by === "device_type") return { body: breakdown([["mobile", 4], ["desktop", 3]]) };
        if (by === "screen_class") return { body: breakdown([["laptop", 3], ["mobile", 2], ["", 2]]) };
        return { status: 500, body: { error: { code: "internal", message: "unexpected" } } };
      },
    });
    const root = await mount(<Devices product={1} from="2026-11-21" to="2026-11-27" env="live" />);
    const tab = (name: string) => [...root.querySelectorAll("[role=tab]")].find((t) => t.textContent === name);
    expect([...root.querySelectorAll("[role=tab]")].map((t) => [t.textContent, t.getAttribute("aria-selected")])).toEqual([
      ["Browser", "true"],
      ["OS", "false"],
      ["Device", "false"],
      ["Screen", "false"],
    ]);
    expect(rows(root, "Browsers")).toEqual([
      ["Chrome", "5"],
      ["Firefox", "2"],
    ]);
    await click(tab("OS"));
    expect(rows(root, "Operating systems")).toEqual([["Linux", "7"]]);
    await click(tab("Device"));
    expect(rows(root, "Device types")).toEqual([
      ["Mobile", "4"],
      ["Desktop", "3"],
    ]);
    await click(tab("Screen"));
    expect(tab("Screen")?.getAttribute("aria-selected")).toBe("true");
    expect(rows(root, "Screen sizes")).toEqual([
      ["Laptop (992–1439 px)", "3"],
      ["Mobile (below 576 px)", "2"],
      ["Unknown", "2"],
    ]);
    expect(root.querySelector("table[aria-label='Browsers']")).toBeNull();
    // Only the tab shown asked the server, each once.
    expect(calls.filter((c) => c.path === "/api/v1/query/trend").map((c) => asked(c).breakdown)).toEqual(["browser", "os", "device_type", "screen_class"]);
  });
});
