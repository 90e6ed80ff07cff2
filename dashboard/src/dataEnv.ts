// Which data the chart pages show: live events, or the events sent with
// test keys (st_test_…), which the query API keeps apart and counts only
// when a query asks for env=test. Like the product and the date range, it
// lives in the URL (?env=test), so a link opens the same data; live is the
// default and leaves the parameter out.
import type { DataEnv } from "./types";

/** envFromSearch reads ?env=: test data only when it says exactly test, else live. */
export function envFromSearch(search: URLSearchParams): DataEnv {
  return search.get("env") === "test" ? "test" : "live";
}

/** searchWithEnv returns a copy of search that names env: test as ?env=test, live by leaving it out. */
export function searchWithEnv(search: URLSearchParams, env: DataEnv): URLSearchParams {
  const out = new URLSearchParams(search);
  if (env === "test") out.set("env", "test");
  else out.delete("env");
  return out;
}
