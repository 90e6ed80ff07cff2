// @vitest-environment node
// The generated API types and limits (scripts/api-types.mjs) must be what
// api/openapi.yaml gives today: a change to the contract that was not
// regenerated fails here, before it can leave the dashboard or an SDK
// typed against an old API.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script, without types
import { generate } from "../scripts/api-types.mjs";

describe("generated API types", () => {
  it("are up to date with api/openapi.yaml (run `npm run api-types` in dashboard/)", async () => {
    const files: Record<string, string> = await generate();
    expect(Object.keys(files).length).toBe(4);
    for (const [path, want] of Object.entries(files)) {
      expect(readFileSync(path, "utf8"), `${path} is stale: run \`npm run api-types\` in dashboard/`).toBe(want);
    }
  });
});
