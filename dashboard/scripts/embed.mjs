// Copies the built dashboard (dist/) into the Go package that embeds it,
// internal/dashboard/dist, replacing what was there: run `npm run build`
// first, then `go build` serves this build.
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const from = join(here, "..", "dist");
const to = join(here, "..", "..", "internal", "dashboard", "dist");
if (!existsSync(join(from, "index.html"))) {
  console.error(`${from}/index.html is missing: run \`npm run build\` first`);
  process.exit(1);
}
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
console.log(`copied ${from} to ${to}`);
