// A user's page (/users/{distinctId}) and the way to it: the events of the
// user drawn from a fixture, newest first, with "Load older" asking for
// the page before the last one's nextBefore; a Replay link only on the
// events of a recorded session; the user's replays linking to the player
// (loaded anew); first and last seen among what was loaded; the env; the
// empty and failed states; /users's search box and the routes; the links
// from the Replays list; and the pure helpers behind them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { App } from "../src/app";
import { activeItem, navItems } from "../src/components/nav";
import { appendPage, cursorParam, FindUser, MAX_PAGES, pagesParam, PersonPage, platform, recordedSession, seen } from "../src/pages/Person";
import { Replays, userHref } from "../src/pages/Replays";
import type { Product, ReplaySession, UserEvent, UserEventsResult } from "../src/types";
import { asRole, byText, click, fakeFetch, mount, settle, submit, type } from "./helpers";

const product: Product = { id: 3, workspaceId: 1, name: "Web shop", createdAt: "2026-11-01T09:00:00Z" };
const user = "ann/ü 1";
const eventsPath = "/api/v1/users/ann%2F%C3%BC%201/events";

const event = (n: number, over: Partial<UserEvent> = {}): UserEvent => ({
  uuid: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
  name: "$pageview",
  timestamp: `2026-11-23T10:${String(59 - n).padStart(2, "0")}:00Z`,
  url: `https://shop.example/p/${n}`,
  path: `/p/${n}`,
  browser: "Firefox",
  os: "Linux",
  deviceType: "desktop",
  sessionId: null,
  properties: {},
  ...over,
});

const session = (id: string, start: string): ReplaySession => ({
  sessionId: id, distinctId: user, start, end: start, durationMs: 65_000, pages: 2, clicks: 7, errors: 1, chunks: 3, bytes: 1000,
});

const firstPage: UserEventsResult = {
  distinctId: user,
  events: [
    event(1, { name: "checkout", sessionId: "rec-1" }),
    event(2, { name: "added_to_cart", sessionId: "not-recorded", path: "", url: "", browser: "", os: "" }),
  ],
  nextBefore: "2026-11-23T10:57:00Z",
};
const olderPage: UserEventsResult = {
  distinctId: user,
  // The first page's last event again (a page loaded twice), then an older one.
  events: [event(2, { name: "added_to_cart" }), event(9, { name: "signed_up", sessionId: "rec-1" })],
  nextBefore: null,
};

afterEach(() => {
  vi.unstubAllGlobals();
  history.replaceState(null, "", "/");
});

const rows = (root: HTMLElement) =>
  [...root.querySelectorAll("[data-testid=user-events] tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent?.trim()));
const facts = (root: HTMLElement) =>
  Object.fromEntries([...root.querySelectorAll("[data-testid=person-facts] > div")].map((d) => [d.querySelector("dt")?.textContent, d.querySelector("dd")?.textContent]));

describe("a user's page", () => {
  it("shows the user's replays and events, newest first, with a Replay link on the events of recorded sessions", async () => {
    const calls = fakeFetch({
      [`GET ${eventsPath}`]: { body: firstPage },
      "GET /api/v1/replays": { body: { items: [session("rec-1", "2026-11-23T10:58:30Z")] } },
    });
    const root = await mount(<PersonPage product={product} distinctId={user} env="live" />);
    const ev = calls.find((c) => c.path === eventsPath)!;
    expect(Object.fromEntries(ev.query)).toEqual({ product: "3", limit: "100" });
    expect(Object.fromEntries(calls.find((c) => c.path === "/api/v1/replays")!.query)).toEqual({ product: "3", distinct_id: user });

    expect(root.querySelector("h1")?.textContent).toBe(user);
    expect(root.querySelector(".crumbs a")?.getAttribute("href")).toBe("/users?product=3");
    expect(rows(root)).toEqual([
      ["23 Nov 2026, 10:58 UTC", "checkout", "/p/1", "Firefox / Linux", "Replay"],
      ["23 Nov 2026, 10:57 UTC", "added_to_cart", "—", "—", ""],
    ]);
    const replay = byText(root.querySelector("[data-testid=user-events]")!, "a", "Replay")!;
    expect(replay.getAttribute("href")).toBe(`/replays/rec-1?product=3&t=${Date.parse("2026-11-23T10:58:00Z")}`);
    // A link to the player loads its page anew (docs/replay.md, "The player"): no in-app click handler.
    const clicked = new MouseEvent("click", { bubbles: true, cancelable: true });
    replay.dispatchEvent(clicked);
    expect(clicked.defaultPrevented).toBe(false);

    const sessions = root.querySelectorAll("[data-testid=user-replays] tbody tr");
    expect(sessions).toHaveLength(1);
    expect([...sessions[0].querySelectorAll("td")].map((td) => td.textContent)).toEqual(["23 Nov 2026, 10:58 UTC", "1 min 5 s", "2", "7", "1"]);
    expect(sessions[0].querySelector("a")?.getAttribute("href")).toBe("/replays/rec-1?product=3");

    expect(facts(root)).toEqual({
      "Last seen": "23 Nov 2026, 10:58 UTC",
      "First seen (of the events loaded)": "23 Nov 2026, 10:57 UTC",
      Events: "2+",
      "Recorded sessions": "1",
    });
  });

  it("loads older events from the last page's nextBefore, once each, until there are no more", async () => {
    const calls = fakeFetch({
      [`GET ${eventsPath}`]: (c) => ({ body: c.query.get("before") ? olderPage : firstPage }),
      "GET /api/v1/replays": { body: { items: [session("rec-1", "2026-11-23T10:58:30Z")] } },
    });
    const root = await mount(<PersonPage product={product} distinctId={user} env="test" />);
    expect(calls.find((c) => c.path === eventsPath)?.query.get("env")).toBe("test");
    await click(byText(root, "button", "Load older"));
    const older = calls.filter((c) => c.path === eventsPath);
    expect(older).toHaveLength(2);
    expect(Object.fromEntries(older[1].query)).toEqual({ product: "3", limit: "100", before: "2026-11-23T10:57:00Z", env: "test" });
    // The view is in the URL, a new entry: a reload or a link loads both pages.
    expect(new URLSearchParams(location.search).get("pages")).toBe("2");
    expect(rows(root).map((r) => r[1])).toEqual(["checkout", "added_to_cart", "signed_up"]);
    // An older event of a recorded session links to it too.
    expect(rows(root)[2][4]).toBe("Replay");
    expect(byText(root, "button", "Load older")).toBeUndefined();
    expect(root.querySelector("[data-testid=events-end]")?.textContent).toBe("These are all 3 of the user's events.");
    expect(facts(root)).toMatchObject({ "First seen": "23 Nov 2026, 10:50 UTC", Events: "3" });
  });

  it("loads the pages a link asks for, at most MAX_PAGES, then starts a view at ?before= the oldest shown", async () => {
    // Page k (from 0) holds one event and always has an older page.
    const cursor = (k: number) => new Date(Date.UTC(2026, 10, 23, 10) - (k + 1) * 3_600_000).toISOString();
    const pageAt = (before: string | null): UserEventsResult => {
      const k = before === null ? 0 : Math.round((Date.UTC(2026, 10, 23, 10) - Date.parse(before)) / 3_600_000);
      return { distinctId: user, events: [event(k, { name: `e${k}`, timestamp: new Date(Date.UTC(2026, 10, 23, 10) - k * 3_600_000 - 60_000).toISOString() })], nextBefore: cursor(k) };
    };
    const calls = fakeFetch({
      [`GET ${eventsPath}`]: (c) => ({ body: pageAt(c.query.get("before")) }),
      "GET /api/v1/replays": { body: { items: [] } },
    });
    history.replaceState(null, "", `/users/x?product=3&pages=25`);
    const root = await mount(<PersonPage product={product} distinctId={user} env="live" />);
    await settle();
    await settle();
    const asked = () => calls.filter((c) => c.path === eventsPath).map((c) => c.query.get("before"));
    // One after another, each from the previous page's nextBefore, and no more than MAX_PAGES.
    expect(asked()).toEqual([null, ...Array.from({ length: MAX_PAGES - 1 }, (_, k) => cursor(k))]);
    expect(rows(root).map((r) => r[1])).toEqual(Array.from({ length: MAX_PAGES }, (_, k) => `e${k}`));
    await click(byText(root, "button", "Load older"));
    await settle();
    const search = new URLSearchParams(location.search);
    expect([search.get("before"), search.get("pages")]).toEqual([cursor(MAX_PAGES - 1), null]);
    expect(asked().at(-1)).toBe(cursor(MAX_PAGES - 1));
    expect(rows(root).map((r) => r[1])).toEqual([`e${MAX_PAGES}`]);
    expect(root.querySelector("[data-testid=events-from]")?.textContent).toContain("Show the newest events");
    expect(facts(root)).toMatchObject({ "Last seen (of the events shown)": expect.any(String), "Events shown": "1+" });
  });

  it("says when the user has no event and no replay, and shows a failure with Try again", async () => {
    let fail = true;
    fakeFetch({
      [`GET ${eventsPath}`]: () => (fail ? { status: 503, body: { error: { code: "server_busy", message: "The server is busy." } } } : { body: { distinctId: user, events: [], nextBefore: null } }),
      "GET /api/v1/replays": { body: { items: [] } },
      // No profile either: the Properties card says so, without an alert of its own.
      "GET /api/v1/persons/ann%2F%C3%BC%201": { status: 404, body: { error: { code: "person_not_found", message: "No person." } } },
    });
    const root = await mount(<PersonPage product={product} distinctId={user} env="live" />);
    expect(root.querySelector("[role=alert]")?.textContent).toContain("The server is busy.");
    fail = false;
    await click(byText(root, "button", "Try again"));
    expect(root.querySelector("[data-testid=no-user-events]")?.textContent).toContain(`No events of ${user} in Web shop.`);
    expect(root.querySelector("[data-testid=no-user-replays]")).toBeTruthy();
    expect(facts(root)).toEqual({ "Last seen": "—", "First seen": "—", Events: "0", "Recorded sessions": "0" });
  });

  it("finds a user by the id typed, escaped in the path, keeping test data", async () => {
    const root = await mount(<FindUser product={product} env="test" />);
    await type(root.querySelector("input[type=search]"), `  ${user} `);
    await submit(root.querySelector("form[role=search]"));
    expect(location.pathname + location.search).toBe("/users/ann%2F%C3%BC%201?product=3&env=test");
  });

  it("keeps what is typed in the search box in the URL, replacing the entry", async () => {
    history.replaceState(null, "", "/users?product=3");
    const entries = history.length;
    const root = await mount(<FindUser product={product} env="live" />);
    await type(root.querySelector("input[type=search]"), "bob");
    expect(location.search).toBe("?product=3&distinct_id=bob");
    expect(history.length).toBe(entries);
    // Back from the user's page: the box shows what the URL holds.
    const again = await mount(<FindUser product={product} env="live" />);
    expect(again.querySelector<HTMLInputElement>("input[type=search]")?.value).toBe("bob");
  });
});

describe("links to a user's page", () => {
  it("opens the user from the Replays list, and the session from its start", async () => {
    fakeFetch({ "GET /api/v1/replays": { body: { items: [session("rec-1", "2026-11-23T10:58:30Z")] } } });
    const root = await mount(<Replays product={product} range={{ key: "7d", from: "2026-11-17", to: "2026-11-23" }} />);
    const [who, start] = root.querySelectorAll("[data-testid=replays] tbody tr td");
    expect(who.querySelector("a")?.getAttribute("href")).toBe(userHref(3, user));
    expect(userHref(3, user)).toBe("/users/ann%2F%C3%BC%201?product=3");
    expect(start.querySelector("a")?.getAttribute("href")).toBe("/replays/rec-1?product=3");
  });

  it("lists Users after Replays and keeps it marked on a user's page", () => {
    const items = navItems({ errorTracking: false });
    const labels = items.map((i) => i.label);
    expect(labels.indexOf("Users")).toBe(labels.indexOf("Replays") + 1);
    expect(activeItem(items, "/users/ann%2F")?.label).toBe("Users");
    expect(activeItem(items, "/users")).toMatchObject({ chart: false, env: true });
  });
});

describe("the routes", () => {
  const shell = {
    "GET /api/v1/dashboard/config": { body: { setupRequired: false, features: { errorTracking: false } } },
    "GET /api/v1/session": { body: { user: { id: 1, email: "owner@example.com", createdAt: "2026-11-01T09:00:00Z" }, expiresAt: "2026-12-07T09:00:00Z" } },
    "GET /api/v1/products": { body: { items: [product] } },
  };
  afterEach(() => {
    history.replaceState(null, "", "/");
    localStorage.clear();
  });

  it("opens a user's page from its escaped id, with the Live/Test switch but no date range, and test data asked for", async () => {
    history.replaceState(null, "", "/users/ann%2F%C3%BC%201?product=3&env=test");
    const calls = fakeFetch({ ...shell, [`GET ${eventsPath}`]: { body: firstPage }, "GET /api/v1/replays": { body: { items: [] } } });
    const root = await mount(<App />);
    expect(root.querySelector("h1")?.textContent).toBe(user);
    expect(root.querySelector("[role=group][aria-labelledby=env-switch-label]")).toBeTruthy();
    expect(root.querySelector("[data-testid=test-data-banner]")).toBeTruthy();
    expect(root.querySelector("select[aria-label='Date range']")).toBeNull();
    expect(calls.find((c) => c.path === eventsPath)?.query.get("env")).toBe("test");
    expect(root.querySelector("nav.sidebar [aria-current=page]")?.textContent).toBe("Users");
  });

  it("sends /users/ back to the search box", async () => {
    history.replaceState(null, "", "/users/?product=3");
    fakeFetch(shell);
    const root = await mount(<App />);
    expect(location.pathname).toBe("/users");
    expect(root.querySelector("h1")?.textContent).toBe("Users");
  });
});

describe("helpers", () => {
  it("finds the first and last time among loaded events", () => {
    expect(seen([])).toBeNull();
    expect(seen([event(1), event(5), event(3)])).toEqual({ first: event(5).timestamp, last: event(1).timestamp });
  });

  it("appends an older page without repeating an event", () => {
    expect(appendPage([event(1), event(2)], [event(2), event(3)]).map((e) => e.uuid)).toEqual([event(1), event(2), event(3)].map((e) => e.uuid));
  });

  it("links an event to its session only when the session was recorded", () => {
    const recorded = new Set(["rec-1"]);
    expect(recordedSession(event(1, { sessionId: "rec-1" }), recorded)).toBe("rec-1");
    expect(recordedSession(event(1, { sessionId: "other" }), recorded)).toBeNull();
    expect(recordedSession(event(1), recorded)).toBeNull();
  });

  it("reads ?pages= up to MAX_PAGES and ?before= only as a time", () => {
    expect([pagesParam([]), pagesParam(["0"]), pagesParam(["3"]), pagesParam(["999"]), pagesParam(["x"])]).toEqual([null, null, 3, MAX_PAGES, null]);
    expect([cursorParam([]), cursorParam(["2026-11-23T10:57:00.123456Z"]), cursorParam(["soon"])]).toEqual([null, "2026-11-23T10:57:00.123456Z", null]);
  });

  it("writes browser and OS", () => {
    expect([platform({ browser: "Firefox", os: "Linux" }), platform({ browser: "", os: "iOS" }), platform({ browser: "", os: "" })]).toEqual(["Firefox / Linux", "iOS", "—"]);
  });

});

describe("replays roles", () => {
  it("shows deleting all of a user's replays to an admin only", async () => {
    const range = { key: "7d" as const, from: "2026-11-17", to: "2026-11-23" };
    const draw = async (role: "member" | "admin") => {
      history.replaceState(null, "", `/replays?product=3&distinct_id=${encodeURIComponent(user)}`);
      fakeFetch({ "GET /api/v1/replays": { body: { items: [session("rec-1", "2026-11-23T10:58:30Z")] } } });
      return mount(asRole(role, <Replays product={product} range={range} />));
    };
    const member = await draw("member");
    expect(member.querySelector("[data-testid=replays] tbody tr")).not.toBeNull();
    expect(byText(member, "button", `Delete all of ${user}'s replays…`)).toBeUndefined();
    const admin = await draw("admin");
    expect(byText(admin, "button", `Delete all of ${user}'s replays…`)).toBeDefined();
    history.replaceState(null, "", "/");
  });
});

describe("a user's page's Properties card", () => {
  const personPath = "/api/v1/persons/ann%2F%C3%BC%201";
  it("shows the profile's properties, sorted, and its first and last seen", async () => {
    const calls = fakeFetch({
      [`GET ${eventsPath}`]: { body: firstPage },
      "GET /api/v1/replays": { body: { items: [] } },
      [`GET ${personPath}`]: {
        body: { distinctId: user, properties: { plan: "pro", email: "ann@shop.example", seats: 3 }, firstSeen: "2026-11-20T08:00:00Z", lastSeen: "2026-11-23T10:58:00Z", updatedAt: "2026-11-23T10:58:01Z" },
      },
    });
    const root = await mount(<PersonPage product={product} distinctId={user} env="live" />);
    expect(Object.fromEntries(calls.find((c) => c.path === personPath)!.query)).toEqual({ product: "3" });
    const card = root.querySelector("[data-testid=person-properties]")!;
    expect([...card.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent))).toEqual([
      ["email", "ann@shop.example"],
      ["plan", "pro"],
      ["seats", "3"],
    ]);
    expect([...card.querySelectorAll("dd")].map((d) => d.textContent)).toEqual(["20 Nov 2026, 08:00 UTC", "23 Nov 2026, 10:58 UTC"]);
  });

  it("says No profile yet on 404 person_not_found, and the events still show", async () => {
    fakeFetch({
      [`GET ${eventsPath}`]: { body: firstPage },
      "GET /api/v1/replays": { body: { items: [] } },
      [`GET ${personPath}`]: { status: 404, body: { error: { code: "person_not_found", message: "This product has no person with this id." } } },
    });
    const root = await mount(<PersonPage product={product} distinctId={user} env="live" />);
    const card = root.querySelector("[data-testid=person-properties]")!;
    expect(card.textContent).toContain("No profile yet.");
    expect(card.querySelector("[role=alert]")).toBeNull();
    expect(rows(root)).toHaveLength(2);
  });

  it("shows another failure as an error with a retry", async () => {
    fakeFetch({
      [`GET ${eventsPath}`]: { body: firstPage },
      "GET /api/v1/replays": { body: { items: [] } },
      [`GET ${personPath}`]: { status: 500, body: { error: { code: "internal", message: "The query failed." } } },
    });
    const root = await mount(<PersonPage product={product} distinctId={user} env="live" />);
    expect(root.querySelector("[data-testid=person-properties] [role=alert]")?.textContent).toContain("The query failed.");
  });
});
