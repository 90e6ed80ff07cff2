import { beforeEach } from "vitest";

// Pages keep their state in the URL (router.ts, useQueryState), and a test
// file's tests share one window: each test starts at "/" so that the
// filters one test picked are not the next one's (tests run in Node have no history).
beforeEach(() => {
  if (typeof history !== "undefined") history.replaceState(null, "", "/");
});
