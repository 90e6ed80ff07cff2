import { defineConfig } from "vitest/config";

export default defineConfig({
  // Under happy-dom, Vite serves the test files and refuses those outside
  // this package unless allowed: ../shared/'s own tests run here too.
  server: { fs: { allow: [".."] } },
  test: {
    // sdk/shared/ is built into this package, so its tests run here too.
    include: ["test/**/*.test.ts", "../shared/*.test.ts"],
    environment: "happy-dom",
    environmentOptions: { happyDOM: { url: "https://shop.example.com/pricing?plan=pro" } },
    restoreMocks: true,
    unstubGlobals: true,
  },
});
