import { defineConfig } from "vitest/config";

export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    environment: "happy-dom",
    environmentOptions: { happyDOM: { url: "http://127.0.0.1:8080/" } },
    restoreMocks: true,
    unstubGlobals: true,
  },
});
