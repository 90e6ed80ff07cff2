/**
 * Path rules: a campaign's `pathRegex` is compiled as written with `new RegExp`
 * (the server accepts only the subset that means the same in Go and in
 * JavaScript, docs/messages.md), and tested against `location.pathname`.
 */

const compiled = new Map<string, RegExp | null>();

/** pathMatches reports whether `path` matches `pattern`; "" matches every path, an invalid pattern none. */
export function pathMatches(pattern: string, path: string): boolean {
  if (!pattern) return true;
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern);
    } catch {
      re = null;
    }
    compiled.set(pattern, re);
  }
  return !!re && re.test(path);
}
