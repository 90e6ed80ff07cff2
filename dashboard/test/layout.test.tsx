import { render } from "preact";
import { afterEach, describe, expect, it } from "vitest";
import { DateRangePicker } from "../src/components/DateRangePicker";
import { Sidebar } from "../src/components/Sidebar";
import { navItems } from "../src/components/nav";
import { presetRange, type DateRange } from "../src/range";
import { withParams } from "../src/router";
import { act } from "preact/test-utils";
import { byText, click, mount, submit, type } from "./helpers";

const labels = (root: HTMLElement) => [...root.querySelectorAll(".nav-item")].map((a) => a.textContent);

describe("sidebar", () => {
  afterEach(() => history.replaceState(null, "", "/"));

  it("lists every page in order, without Errors unless the flag is on", async () => {
    const off = await mount(<Sidebar items={navItems({ errorTracking: false })} path="/" search={new URLSearchParams()} email="a@b.co" onLogout={() => {}} />);
    expect(labels(off)).toEqual(["Overview", "Trends", "Funnels", "Paths", "Retention", "Acquisition", "Dashboards", "Annotations", "Replays", "Users", "People", "Cohorts", "Messages", "Experiments", "Flags", "Settings", "API reference"]);
    const on = await mount(<Sidebar items={navItems({ errorTracking: true })} path="/errors" search={new URLSearchParams()} email="a@b.co" onLogout={() => {}} />);
    expect(labels(on)).toEqual(["Overview", "Trends", "Funnels", "Paths", "Retention", "Acquisition", "Dashboards", "Annotations", "Errors", "Replays", "Users", "People", "Cohorts", "Messages", "Experiments", "Flags", "Settings", "API reference"]);
    expect(on.querySelector("[aria-current=page]")?.textContent).toBe("Errors");
  });

  it("carries the product and date range in every link, and marks Settings on its subpages", async () => {
    const search = new URLSearchParams("product=4&range=7d&other=x");
    const root = await mount(<Sidebar items={navItems({ errorTracking: false })} path="/settings/products/4" search={search} email="a@b.co" onLogout={() => {}} />);
    expect(byText(root, "a", "Trends")?.getAttribute("href")).toBe("/trends?product=4&range=7d");
    expect(root.querySelector("[aria-current=page]")?.textContent).toBe("Settings");
    expect(withParams("/funnels", new URLSearchParams("from=2026-01-01&to=2026-01-02"))).toBe("/funnels?from=2026-01-01&to=2026-01-02");
  });
});

describe("the menu on narrow screens", () => {
  const mountSidebar = async (path = "/trends") => {
    const root = await mount(
      <div>
        <Sidebar items={navItems({ errorTracking: false })} path={path} search={new URLSearchParams("product=1")} email="a@b.co" onLogout={() => {}} main="content" />
        <main id="content" tabIndex={-1} />
      </div>,
    );
    const button = byText(root, "button", "Menu") as HTMLButtonElement;
    return { root, button, nav: root.querySelector("nav.sidebar")! };
  };
  const key = async (k: string) => {
    await act(() => {
      document.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true }));
    });
  };

  it("collapses the entries behind a Menu button that says what it controls and whether it is open", async () => {
    const { root, button, nav } = await mountSidebar();
    expect(button.getAttribute("aria-controls")).toBe("nav-menu");
    expect(root.querySelector("#nav-menu")?.querySelectorAll(".nav-item").length).toBe(navItems({ errorTracking: false }).length);
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(nav.classList.contains("open")).toBe(false);
    await click(button);
    expect(button.getAttribute("aria-expanded")).toBe("true");
    expect(nav.classList.contains("open")).toBe(true);
    await click(button);
    expect(button.getAttribute("aria-expanded")).toBe("false");
  });

  it("closes on Escape and gives focus back to the button", async () => {
    const { root, button } = await mountSidebar();
    await click(button);
    (byText(root, "a", "Funnels") as HTMLElement).focus();
    await key("Escape");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(document.activeElement).toBe(button);
    // Escape does nothing to a closed menu.
    (root.querySelector("main") as HTMLElement).focus();
    await key("Escape");
    expect(document.activeElement).toBe(root.querySelector("main"));
  });

  it("closes on a click outside it", async () => {
    const { root, button } = await mountSidebar();
    await click(button);
    await click(root.querySelector(".whoami .email"));
    expect(button.getAttribute("aria-expanded")).toBe("true");
    await click(root.querySelector("main"));
    expect(button.getAttribute("aria-expanded")).toBe("false");
  });

  it("closes when a page is picked, and moves focus to the page", async () => {
    const { root, button } = await mountSidebar();
    await click(button);
    await click(byText(root, "a", "Funnels"));
    expect(location.pathname).toBe("/funnels");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(document.activeElement).toBe(root.querySelector("main#content"));
  });
});

describe("date-range picker", () => {
  it("offers the presets and a custom range, and refuses a backwards one", async () => {
    const picked: DateRange[] = [];
    const root = await mount(<DateRangePicker range={presetRange("30d")} onChange={(r) => picked.push(r)} />);
    const select = root.querySelector<HTMLSelectElement>("select")!;
    expect([...select.options].map((o) => o.value)).toEqual(["today", "yesterday", "7d", "30d", "90d", "365d", "custom"]);
    expect(select.value).toBe("30d");

    select.value = "custom";
    select.dispatchEvent(new Event("change", { bubbles: true }));
    await new Promise((r) => setTimeout(r, 0));
    const from = root.querySelector<HTMLInputElement>("input[aria-label=From]");
    const to = root.querySelector<HTMLInputElement>("input[aria-label=To]");
    await type(from, "2026-10-15");
    await type(to, "2026-10-01");
    await submit(root.querySelector("form"));
    expect(root.querySelector("[role=alert]")?.textContent).toMatch(/before the start/);
    expect(picked).toEqual([]);
    await type(to, "2026-10-20");
    await submit(root.querySelector("form"));
    expect(picked).toEqual([{ key: "custom", from: "2026-10-15", to: "2026-10-20" }]);
  });

  it("keeps Custom… open when the preset picked a moment before arrives late", async () => {
    const root = document.createElement("div");
    document.body.append(root);
    const draw = (range: DateRange) => act(() => render(<DateRangePicker range={range} onChange={() => {}} />, root));
    await draw(presetRange("30d"));
    const select = root.querySelector<HTMLSelectElement>("select")!;
    select.value = "custom";
    await act(() => {
      select.dispatchEvent(new Event("change", { bubbles: true }));
    });
    await type(root.querySelector("input[aria-label=From]"), "2026-10-01");
    // The app now delivers the 7-day preset the person had picked first.
    await draw(presetRange("7d"));
    const from = root.querySelector<HTMLInputElement>("input[aria-label=From]");
    expect(from?.value).toBe("2026-10-01");
    expect(select.value).toBe("custom");
    root.remove();
  });
});
