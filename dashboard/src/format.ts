// Formatting for people. Dates are shown in UTC, as the query API counts
// days in UTC, with the time where it matters.

const dateTime = new Intl.DateTimeFormat("en-GB", {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZone: "UTC",
});

/** when writes a timestamp as "23 Nov 2026, 10:04 UTC", or the fallback when absent. */
export function when(iso: string | null | undefined, fallback = "Never"): string {
  if (!iso) return fallback;
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? fallback : `${dateTime.format(t)} UTC`;
}

/** snippet is the script tag that installs the browser SDK with a key. */
export function snippet(origin: string, key: string): string {
  return `<script src="${origin}/sdk/v1/sdk.min.js"></script><script>strata.init({apiKey: ${JSON.stringify(key)}})</script>`;
}

/** capitalise upper-cases the first letter. */
export function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
