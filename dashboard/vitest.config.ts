import { defineConfig } from "vitest/config";

export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    setupFiles: ["test/setup.ts"],
    environment: "happy-dom",
    // The message preview's frame is a page of the server: happy-dom does not load it.
    environmentOptions: { happyDOM: { url: "http://127.0.0.1:8080/", settings: { disableIframePageLoading: true } } },
    restoreMocks: true,
    unstubGlobals: true,
  },
});
