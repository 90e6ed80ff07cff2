// The first-run setup token. While a server has no owner it prints, at
// every start, the address to open: the dashboard's URL with
// ?setup_token=…, a one-time secret that setup must present
// (docs/security.md, "First-run setup and DNS rebinding").

/** setupTokenParam is the query parameter that carries the token. */
export const setupTokenParam = "setup_token";

/**
 * takeSetupToken returns the setup token of the page's URL ("" without
 * one) and removes it from the address bar, so that it is not left in
 * view, copied with a link or kept as the page's address.
 */
export function takeSetupToken(): string {
  const url = new URL(location.href);
  if (!url.searchParams.has(setupTokenParam)) return "";
  const token = (url.searchParams.get(setupTokenParam) ?? "").trim();
  url.searchParams.delete(setupTokenParam);
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  return token;
}
