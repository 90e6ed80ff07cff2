// Vite builds the dashboard into dist/, which is copied into
// internal/dashboard/dist and embedded in the strata binary (README.md).
// `npm run dev` serves it with hot reload and sends /api to a running
// strata (STRATA_URL, default http://127.0.0.1:8080), so that the session
// cookie and the Origin check see one origin, as in production.
import { defineConfig } from "vite";

const strata = process.env.STRATA_URL || "http://127.0.0.1:8080";

export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // One small app: no inline assets, so the server's Content-Security-
    // Policy can stay 'self' only.
    assetsInlineLimit: 0,
  },
  server: {
    proxy: {
      "/api": { target: strata, changeOrigin: true, headers: { Origin: strata } },
      "/sdk": { target: strata, changeOrigin: true },
    },
  },
});
