import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // sdk/shared/ is built into this package, so its tests run here too.
    include: ["test/**/*.test.ts", "../shared/*.test.ts"],
    environment: "node",
    restoreMocks: true,
  },
});
