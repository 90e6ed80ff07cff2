// The type declarations of an SDK package, as its tarball ships them. Both
// SDKs' scripts/build.mjs call this after esbuild.
//
// A package compiles its own src/ together with sdk/shared/ (the code both
// SDKs build from, README.md here), so its tsconfig.json has rootDir ".." and
// tsc writes dist/types/<package>/src/*.d.ts and dist/types/shared/*.d.ts.
// The package's entry points name dist/types/index.d.ts, and a user installs
// the package alone, without this folder: the package's declarations move up
// to dist/types/, their imports of the shared ones are rewritten to
// ./shared/…, and every .d.ts gets a .d.cts twin for `require` users.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";

/**
 * emitDeclarations runs the TypeScript compiler of the package at `root`
 * (a directory path ending in a separator is fine) and lays out dist/types/.
 * `drop` lists paths under dist/types/ that are not part of the package's
 * types (files or folders), removed before the .d.cts files are written.
 */
export function emitDeclarations(root, drop = []) {
  const types = join(root, "dist", "types");
  const emitted = join(types, basename(root), "src");
  const shared = join(types, "shared");
  execFileSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", root], { stdio: "inherit" });

  for (const file of walk(emitted)) {
    const from = dirname(file);
    const to = dirname(join(types, relative(emitted, file)));
    // An import that leaves src/ can only reach sdk/shared/ (tsc refuses
    // anything outside rootDir); it gets the path from the file's new place.
    const dts = readFileSync(file, "utf8").replace(/((?:from\s+|import\()")(\.\.\/[^"]+)"/g, (whole, head, spec) => {
      const target = join(from, spec);
      if (!target.startsWith(shared + sep)) return whole;
      const moved = relative(to, target).split(sep).join("/");
      return head + (moved.startsWith(".") ? moved : "./" + moved) + '"';
    });
    writeFileSync(file, dts);
  }
  for (const name of readdirSync(emitted)) renameSync(join(emitted, name), join(types, name));
  rmSync(join(types, basename(root)), { recursive: true });
  for (const path of drop) rmSync(join(types, path), { recursive: true });

  for (const file of walk(types)) {
    // A .d.cts file that imports "./x.cjs" gets the types of "./x.d.cts".
    const cts = readFileSync(file, "utf8").replace(/((?:from\s+|import\()"\.{1,2}\/[\w./-]+)\.js"/g, '$1.cjs"');
    writeFileSync(file.replace(/\.d\.ts$/, ".d.cts"), cts);
  }
}

/** walk lists the .d.ts files under dir, in every subfolder. */
function walk(dir) {
  return readdirSync(dir, { recursive: true })
    .filter((name) => name.endsWith(".d.ts"))
    .map((name) => join(dir, name));
}
