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

/**
 * navigate moves to a path (with its query string) inside the app. A new
 * entry scrolls to the top, as a new page does, unless keepScroll says it
 * is the same page in another state.
 */
export function navigate(to: string, opts: { replace?: boolean; keepScroll?: boolean } = {}): void {
  const here = location.pathname + location.search;
  if (to === here) return;
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  notify();
  if (!opts.replace && !opts.keepScroll) window.scrollTo?.(0, 0);
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

/**
 * How a page's own state sits in the query string: one parameter per
 * setting, repeated for a list (?step=signup&step=paid), and left out while
 * it holds its default, so that the URL stays short and readable. The date
 * range, product and env (sharedParams) are the shell's; a page's names
 * must not collide with them.
 */
export interface QueryPatch {
  [name: string]: string | readonly string[] | null | undefined;
}

/**
 * setQuery writes patch into the current URL: a string sets a parameter,
 * a list repeats it, null, undefined, "" or an empty list removes it.
 * replace rewrites the current history entry (typing in a search box),
 * otherwise a new entry is pushed (a committed change: run a query, pick
 * a select, next page), so that back returns to the previous state.
 */
export function setQuery(patch: QueryPatch, opts: { replace?: boolean } = {}): void {
  const s = new URLSearchParams(location.search);
  for (const [name, v] of Object.entries(patch)) {
    s.delete(name);
    for (const x of v == null ? [] : typeof v === "string" ? [v] : v) if (x !== "") s.append(name, x);
  }
  const qs = readable(s.toString());
  // The same page in another state: the view must not jump to the top.
  navigate(qs ? `${location.pathname}?${qs}` : location.pathname, { replace: opts.replace ?? false, keepScroll: true });
}

/**
 * readable keeps the commas, slashes and colons of a query string as they
 * are: URLSearchParams escapes them, but a query may hold them literally
 * and reads the same, so ?f=is,path,/pricing reads as it means.
 */
function readable(qs: string): string {
  return qs.replace(/%2C/gi, ",").replace(/%2F/gi, "/").replace(/%3A/gi, ":");
}

/**
 * useQueryState is one setting of a page kept in the URL: the value parse
 * reads from the parameter's values (null: absent or not valid, so the
 * default), and a setter that writes format's values (nothing for the
 * default). Back and forward re-render with the value of that entry.
 */
export function useQueryState<T>(
  name: string,
  fallback: T,
  parse: (values: string[]) => T | null = (v) => (v.length ? (v[0] as unknown as T) : null),
  format: (v: T) => string[] = (v) => [String(v)],
): [T, (v: T, opts?: { replace?: boolean }) => void] {
  const loc = useLocation();
  const parsed = parse(loc.search.getAll(name));
  const value = parsed === null ? fallback : parsed;
  const set = (v: T, opts: { replace?: boolean } = {}) => {
    const same = format(v).join("\u0000") === format(fallback).join("\u0000");
    setQuery({ [name]: same ? null : format(v) }, opts);
  };
  return [value, set];
}

/** oneOf is a parse for useQueryState that accepts only the listed values. */
export function oneOf<T extends string>(allowed: readonly T[]): (values: string[]) => T | null {
  return (v) => (v.length && (allowed as readonly string[]).includes(v[0]) ? (v[0] as T) : null);
}

/** positiveInt is a parse for useQueryState that accepts a whole number of at least 1. */
export function positiveInt(values: string[]): number | null {
  const n = Number(values[0]);
  return values.length && /^[1-9]\d{0,8}$/.test(values[0]) ? n : null;
}
