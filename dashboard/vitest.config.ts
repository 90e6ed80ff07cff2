import { defineConfig } from "vitest/config";

export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    include: ["test/**/*.test.{ts,tsx}"],
    environment: "happy-dom",
    // The message preview's frame names scripts and a stylesheet, which
    // happy-dom does not load: it says so quietly rather than logging.
    environmentOptions: { happyDOM: { url: "http://127.0.0.1:8080/", settings: { handleDisabledFileLoadingAsSuccess: true } } },
    restoreMocks: true,
    unstubGlobals: true,
  },
});
