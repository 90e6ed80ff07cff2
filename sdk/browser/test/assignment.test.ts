// Every vector of test/assignment.json (the project's shared vectors, which the
// Go server and SDK and the Node SDK reproduce too) through getVariant end to
// end. The hash, the bucket and the pure assignment are sdk/shared/'s, which
// the Node SDK builds from too; its own test, ../../shared/assignment.test.ts,
// runs in this package's suite (vitest.config.ts).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { FlagClient } from "../src/flags";
import type { FlagConfig, RemoteConfig } from "../src/types";
import "./helpers";

interface Vectors {
  assign: { flag: string; distinctId: string; variant: string }[];
  flags: FlagConfig[];
  targeting: { flag: string; distinctId: string; properties: Record<string, unknown>; cohorts?: Record<string, boolean>; variant: string; exposed: string }[];
}

const vectors: Vectors = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "assignment.json"), "utf8"));

describe("getVariant reproduces every vector", () => {
  it("through the config endpoint", async () => {
    const config: RemoteConfig = { flags: vectors.flags };
    vi.stubGlobal("fetch", async () => new Response(JSON.stringify(config)));
    for (const v of vectors.assign) {
      const flags = new FlagClient({
        host: "https://strata.example.com",
        key: "k",
        distinctId: () => v.distinctId,
        traits: () => ({}),
        capture: () => {},
      });
      expect(await flags.getVariant(v.flag), `${v.flag} / ${v.distinctId}`).toBe(v.variant);
    }
  });

  it("with the traits passed to identify and the cohorts the config gives, for the targeting vectors", async () => {
    for (const v of vectors.targeting) {
      const config: RemoteConfig = { flags: vectors.flags, ...(v.cohorts ? { cohorts: v.cohorts } : {}) };
      vi.stubGlobal("fetch", async () => new Response(JSON.stringify(config)));
      const exposures: unknown[] = [];
      const flags = new FlagClient({
        host: "https://strata.example.com",
        key: "k",
        distinctId: () => v.distinctId,
        traits: () => v.properties,
        capture: (name, props) => exposures.push(props.variant),
      });
      const what = `${v.flag} / ${v.distinctId} / ${JSON.stringify(v.properties)} / ${JSON.stringify(v.cohorts)}`;
      expect(await flags.getVariant(v.flag), what).toBe(v.variant);
      expect(exposures, what).toEqual(v.exposed ? [v.exposed] : []);
      sessionStorage.clear();
    }
  });
});
