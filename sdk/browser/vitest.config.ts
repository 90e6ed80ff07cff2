import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "happy-dom",
    environmentOptions: { happyDOM: { url: "https://shop.example.com/pricing?plan=pro" } },
    restoreMocks: true,
    unstubGlobals: true,
  },
});
