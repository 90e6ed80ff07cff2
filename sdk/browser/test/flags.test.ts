// flags.getVariant: the config request, both caches, exposure and the experiment
// properties on later events.
import { describe, expect, it, vi } from "vitest";
import { bucket } from "../../shared/hash";
import { CONFIG_TTL, VARIANT_TTL } from "../src/flags";
import { FLUSH_DELAY } from "../src/queue";
import type { FlagConfig, RemoteConfig } from "../src/types";
import { HOST, KEY, net, reload, start, status } from "./helpers";

const pricing: FlagConfig = {
  key: "pricing_copy_test",
  enabled: true,
  rollout: 100,
  variants: [
    { key: "control", weight: 50 },
    { key: "treatment", weight: 50 },
  ],
  experiment: { id: "exp_42", status: "running", holdout: 0.1 },
};
const onboarding: FlagConfig = { key: "new_onboarding", enabled: true, rollout: 100, variants: [], experiment: null };

/** In test/assignment.json this user gets the treatment arm of pricing_copy_test… */
const TREATED = "usér-ß";
/** …and this one is in its 10 % holdout (holdout bucket below 1000). */
const HELD = Array.from({ length: 100 }, (_, i) => "h" + i).find((id) => bucket("holdout", pricing.key, id) < 1000)!;

function serve(config: RemoteConfig = { flags: [pricing, onboarding] }, requests = 50) {
  const answer = (url: string) =>
    url.includes("/api/v1/config") ? new Response(JSON.stringify(config)) : new Response("{}", { status: 202 });
  net.answers = Array.from({ length: requests }, () => answer);
}

function configFetches() {
  return net.fetches.filter((c) => c.url.includes("/api/v1/config"));
}

async function sent() {
  await vi.advanceTimersByTimeAsync(FLUSH_DELAY);
  return net.events();
}

describe("getVariant", () => {
  it("asks GET /api/v1/config with the key and distinct id", async () => {
    serve();
    const s = start();
    s.identify(TREATED);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
    expect(await s.flags.getVariant("new_onboarding")).toBe("on");
    const [c] = configFetches();
    expect(c.url).toBe(`${HOST}/api/v1/config?api_key=${KEY}&distinct_id=us%C3%A9r-%C3%9F`);
    expect(c.init.method ?? "GET").toBe("GET");
    expect(configFetches()).toHaveLength(1);
  });

  it("returns control for a missing flag", async () => {
    serve();
    expect(await start().flags.getVariant("nope")).toBe("control");
  });

  it.each([
    ["a network error", new TypeError("Failed to fetch")],
    ["a 500", status(500)],
    ["a 404", status(404)],
    ["a body that is not a config", new Response('{"error":1}')],
  ])("returns control on %s and asks again next time", async (_, answer) => {
    net.answers = [answer];
    const s = start();
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("control");
    serve();
    s.identify(TREATED);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
  });

  it("shares one request between concurrent calls", async () => {
    serve();
    const s = start();
    s.identify(TREATED);
    const all = await Promise.all([s.flags.getVariant("pricing_copy_test"), s.flags.getVariant("new_onboarding")]);
    expect(all).toEqual(["treatment", "on"]);
    expect(configFetches()).toHaveLength(1);
  });

  it("caches the config for 5 minutes in sessionStorage, and variants for 60 seconds", async () => {
    vi.useFakeTimers();
    serve();
    const s = start();
    s.identify(TREATED);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
    // The server's config changes; the page keeps its answers until the caches expire.
    serve({ flags: [{ ...pricing, enabled: false }] });
    await vi.advanceTimersByTimeAsync(VARIANT_TTL - 1);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
    expect(configFetches()).toHaveLength(1);
    // Past 60 s the variant is computed again, from the cached config.
    await vi.advanceTimersByTimeAsync(1);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
    expect(configFetches()).toHaveLength(1);
    expect(JSON.parse(sessionStorage.getItem("strata_config")!).config.flags[0].key).toBe("pricing_copy_test");
    // A reload in the same session reuses the config too.
    const next = reload();
    expect(await next.flags.getVariant("pricing_copy_test")).toBe("treatment");
    expect(configFetches()).toHaveLength(1);
    // Past 5 minutes the config is fetched again.
    await vi.advanceTimersByTimeAsync(CONFIG_TTL);
    expect(await next.flags.getVariant("pricing_copy_test")).toBe("control");
    expect(configFetches()).toHaveLength(2);
  });

  it("assigns again after identify (the distinct id changed)", async () => {
    serve();
    const s = start();
    s.identify(HELD);
    await s.flags.getVariant("pricing_copy_test");
    s.identify(TREATED);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
    expect(configFetches().map((c) => new URL(c.url).searchParams.get("distinct_id"))).toEqual([HELD, TREATED]);
  });

  it("never rejects, even when storage throws", async () => {
    serve();
    vi.spyOn(sessionStorage, "getItem").mockImplementation(() => {
      throw new DOMException("denied");
    });
    vi.spyOn(sessionStorage, "setItem").mockImplementation(() => {
      throw new DOMException("denied");
    });
    const s = start();
    s.identify(TREATED);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("treatment");
  });
});

describe("exposure", () => {
  it("sends $exposure once per flag per session", async () => {
    vi.useFakeTimers();
    serve();
    const s = start();
    s.identify(TREATED);
    await s.flags.getVariant("pricing_copy_test");
    await s.flags.getVariant("pricing_copy_test");
    await s.flags.getVariant("new_onboarding");
    await reload().flags.getVariant("pricing_copy_test"); // same session
    const exposures = (await sent()).filter((e) => e.event_name == "$exposure");
    expect(exposures.map((e) => e.properties)).toEqual([
      expect.objectContaining({ flag: "pricing_copy_test", experiment_id: "exp_42", variant: "treatment" }),
      expect.objectContaining({ flag: "new_onboarding", experiment_id: null, variant: "on" }),
    ]);
    expect(exposures[0].distinct_id).toBe(TREATED);
  });

  it("sends no exposure for a missing flag or an unreachable server", async () => {
    vi.useFakeTimers();
    const s = start();
    net.answers = [new TypeError("Failed to fetch")];
    await s.flags.getVariant("pricing_copy_test");
    serve();
    await s.flags.getVariant("missing");
    expect((await sent()).filter((e) => e.event_name == "$exposure")).toEqual([]);
  });

  it("reports holdout users as variant holdout and attaches nothing to their events", async () => {
    vi.useFakeTimers();
    serve();
    const s = start();
    s.identify(HELD);
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("control");
    s.track("checkout_completed", { converted: 1 });
    const events = await sent();
    const exposure = events.find((e) => e.event_name == "$exposure")!;
    expect(exposure.properties).toMatchObject({ flag: "pricing_copy_test", experiment_id: "exp_42", variant: "holdout" });
    const done = events.find((e) => e.event_name == "checkout_completed")!;
    expect(done.properties).not.toHaveProperty("experiment_id");
    expect(done.properties).not.toHaveProperty("variant");
  });
});

describe("users outside the rollout", () => {
  // Rollout 50: the users whose rollout bucket is 5000 or more are not in the experiment.
  const half: FlagConfig = { ...pricing, rollout: 50 };
  const ids = Array.from({ length: 400 }, (_, i) => "r" + i);
  const inHoldout = (id: string) => bucket("holdout", half.key, id) < 1000;
  const OUTSIDE = ids.find((id) => !inHoldout(id) && bucket("rollout", half.key, id) >= 5000)!;
  const INSIDE = ids.find((id) => !inHoldout(id) && bucket("rollout", half.key, id) < 5000)!;

  it("get control, are exposed as excluded, and carry no experiment properties", async () => {
    vi.useFakeTimers();
    serve({ flags: [half] });
    const s = start();
    s.identify(OUTSIDE);
    expect(await s.flags.getVariant(half.key)).toBe("control");
    s.track("checkout_completed", { converted: 1 });
    const events = await sent();
    const exposures = events.filter((e) => e.event_name == "$exposure");
    expect(exposures.map((e) => e.properties)).toEqual([
      expect.objectContaining({ flag: half.key, experiment_id: "exp_42", variant: "excluded" }),
    ]);
    const done = events.find((e) => e.event_name == "checkout_completed")!;
    expect(done.properties).not.toHaveProperty("experiment_id");
    expect(done.properties).not.toHaveProperty("variant");
  });

  it("are exposed as excluded without an experiment too, while users inside get their arm", async () => {
    vi.useFakeTimers();
    serve({ flags: [{ ...half, experiment: null }] });
    const s = start();
    s.identify(OUTSIDE);
    expect(await s.flags.getVariant(half.key)).toBe("control");
    s.identify(INSIDE);
    const arm = await s.flags.getVariant(half.key);
    const exposures = (await sent()).filter((e) => e.event_name == "$exposure");
    expect(exposures.map((e) => [e.distinct_id, (e.properties as { variant: string }).variant])).toEqual([
      [OUTSIDE, "excluded"],
      [INSIDE, arm],
    ]);
    expect(["control", "treatment"]).toContain(arm);
  });

  it("never count as control: of 400 users at rollout 50, control and treatment are exposed about equally", async () => {
    vi.useFakeTimers();
    // One config request per user and a few batches.
    serve({ flags: [half] }, 500);
    const s = start();
    const answers = new Map<string, string>();
    for (const id of ids) {
      s.identify(id);
      answers.set(id, await s.flags.getVariant(half.key));
    }
    const exposures = (await sent()).filter((e) => e.event_name == "$exposure");
    const count: Record<string, number> = {};
    for (const e of exposures) {
      const v = (e.properties as { variant: string }).variant;
      count[v] = (count[v] ?? 0) + 1;
      // Whatever the exposure says, getVariant answered the arm, or control outside the experiment.
      expect(answers.get(e.distinct_id as string)).toBe(v == "holdout" || v == "excluded" ? "control" : v);
    }
    expect(exposures).toHaveLength(400);
    expect(count.excluded).toBeGreaterThan(140);
    expect(Math.abs(count.control - count.treatment)).toBeLessThan(50);
  });
});

describe("experiment properties", () => {
  it("are attached to every later track() and autocaptured event", async () => {
    vi.useFakeTimers();
    serve();
    const s = start({ autocapture: true });
    s.track("before");
    s.identify(TREATED);
    await s.flags.getVariant("pricing_copy_test");
    s.track("checkout_completed", { converted: 1, variant: "forged" });
    history.pushState({}, "", "/thanks");
    const events = await sent();
    const byName = (n: string) => events.filter((e) => e.event_name == n).at(-1)!.properties;
    expect(byName("before")).not.toHaveProperty("experiment_id");
    expect(byName("$identify")).not.toHaveProperty("experiment_id");
    expect(byName("checkout_completed")).toMatchObject({ converted: 1, experiment_id: "exp_42", variant: "treatment" });
    expect(byName("$pageview")).toMatchObject({ experiment_id: "exp_42", variant: "treatment" });
  });

  it("are not attached for a flag without a running experiment", async () => {
    vi.useFakeTimers();
    serve({ flags: [onboarding, { ...pricing, experiment: { id: "exp_42", status: "paused", holdout: 0 } }] });
    const s = start();
    s.identify(TREATED);
    expect(await s.flags.getVariant("new_onboarding")).toBe("on");
    expect(await s.flags.getVariant("pricing_copy_test")).toBe("control");
    s.track("x");
    const x = (await sent()).find((e) => e.event_name == "x")!;
    expect(x.properties).not.toHaveProperty("experiment_id");
  });
});

describe("targeting", () => {
  const proOnly: FlagConfig = {
    key: "pro_only",
    enabled: true,
    rollout: 100,
    variants: [],
    experiment: null,
    conditions: [{ type: "trait", trait: "plan", op: "eq", value: "pro" }],
  };

  it("evaluates the conditions on the traits passed to identify, and again after identify", async () => {
    vi.useFakeTimers();
    serve({ flags: [proOnly] });
    const s = start();
    expect(await s.flags.getVariant("pro_only")).toBe("control");
    s.identify("ana", { plan: "free" });
    expect(await s.flags.getVariant("pro_only")).toBe("control");
    s.identify("ana", { plan: "pro", seats: 3 });
    expect(await s.flags.getVariant("pro_only")).toBe("on");
    // One exposure per flag and user in a session: the anonymous user's, then ana's
    // while her traits did not match. A user whose properties change during an
    // experiment is in no arm (docs/flags.md, "Targeting").
    const exposures = (await sent()).filter((e) => e.event_name == "$exposure").map((e) => [e.distinct_id == "ana", e.properties?.variant]);
    expect(exposures).toEqual([
      [false, "excluded"],
      [true, "excluded"],
    ]);
  });

  it("keeps traits across page loads, and forgets them on reset", async () => {
    serve({ flags: [proOnly] });
    start().identify("bo", { plan: "pro" });
    serve({ flags: [proOnly] });
    const s = reload();
    expect(await s.flags.getVariant("pro_only")).toBe("on");
    s.reset();
    expect(await s.flags.getVariant("pro_only")).toBe("control");
  });
});
