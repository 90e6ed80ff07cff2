// A small history-API router: the location is the URL, pages subscribe to
// it, and links change it without reloading. The server answers every page
// path with the app (internal/dashboard), so any URL can be opened or
// shared directly.
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

function notify(): void {
  for (const fn of listeners) fn();
}

if (typeof window !== "undefined") window.addEventListener("popstate", notify);

/** navigate moves to a path (with its query string) inside the app. */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const here = location.pathname + location.search;
  if (to === here) return;
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
  if (!opts.replace) window.scrollTo?.(0, 0);
}

/** Loc is the part of the URL the app routes on. */
export interface Loc {
  path: string;
  search: URLSearchParams;
}

function current(): Loc {
  return { path: location.pathname, search: new URLSearchParams(location.search) };
}

/** useLocation re-renders its component whenever the URL changes. */
export function useLocation(): Loc {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const fn = () => setLoc(current());
    listeners.add(fn);
    fn();
    return () => void listeners.delete(fn);
  }, []);
  return loc;
}

/**
 * onLinkClick makes a plain click on an in-app link navigate without a
 * reload; clicks with a modifier (new tab, download) keep their meaning.
 */
export function onLinkClick(e: MouseEvent): void {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.currentTarget as HTMLAnchorElement | null) ?? null;
  const href = a?.getAttribute("href");
  if (!href || !href.startsWith("/") || a?.target) return;
  e.preventDefault();
  navigate(href);
}

/** The query parameters that follow a person from page to page. */
export const sharedParams = ["product", "range", "from", "to", "env"] as const;

/** withParams is path plus the shared parameters of search that are set. */
export function withParams(path: string, search: URLSearchParams, keep: readonly string[] = sharedParams): string {
  const out = new URLSearchParams();
  for (const k of keep) {
    const v = search.get(k);
    if (v) out.set(k, v);
  }
  const qs = out.toString();
  return qs ? `${path}?${qs}` : path;
}
