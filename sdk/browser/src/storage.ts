/**
 * Storage that never throws. localStorage and sessionStorage throw in some
 * privacy modes and when full; the SDK must keep working (in memory) then.
 *
 * What the SDK stores goes to one of three places (README.md, "Cookieless mode"):
 * - "browser": localStorage, sessionStorage and, as a fallback, a cookie;
 * - "memory": this page load's memory only, the browser's storage never touched (cookieless
 *   mode);
 * - "pending": while the SDK waits for the product's setting, writes are held in memory over
 *   what the browser has stored (which is read), and `settle` then writes them to the
 *   browser, keeps them in memory, or drops them.
 */

type Area = "localStorage" | "sessionStorage";
export type Place = "browser" | "memory" | "pending";

/**
 * Removes a cookie when written after its name: a date in the past, which every browser
 * (and test DOM) takes as "delete", where some keep an emptied cookie for max-age=0.
 */
const EXPIRED = "=;expires=Thu, 01 Jan 1970 00:00:00 GMT;path=/;SameSite=Lax";
/** Every key the SDK stores starts with this. */
const PREFIX = "strata_";

let place: Place = "browser";
/** The writes not made to the browser: key → [area, or "persist" for persist()'s, and the value or null for removed]. */
const held = new Map<string, [Area | "persist", string | null]>();

/**
 * storeIn chooses where what is stored goes from now on (see above), dropping what an
 * earlier instance held. "memory" also removes what the SDK stored in the browser before.
 */
export function storeIn(p: Place): void {
  held.clear();
  place = p;
  if (p == "memory") wipe();
}

/**
 * settle ends "pending": "browser" writes what was held to the browser, "memory" keeps it
 * in memory and removes what the SDK stored in the browser, "discard" drops it (a visitor
 * who is not tracked gets nothing stored) and stores in the browser from then on.
 */
export function settle(to: "browser" | "memory" | "discard"): void {
  if (place != "pending") return;
  if (to == "memory") {
    place = "memory";
    wipe();
    return;
  }
  place = "browser";
  const writes = [...held.entries()];
  held.clear();
  if (to == "discard") return;
  for (const [key, [area, value]] of writes) {
    const name = key.slice(key.indexOf("\n") + 1);
    if (area == "persist") {
      if (value == null) forget(name);
      else persist(name, value);
    } else if (value == null) {
      try {
        window[area].removeItem(name);
      } catch {
        // Storage blocked: nothing was stored there.
      }
    } else {
      set(area, name, value);
    }
  }
}

/** heldValue returns [found, value] for a write held in memory. */
function heldValue(area: Area | "persist", key: string): [boolean, string | null] {
  const h = held.get(area + "\n" + key);
  return h ? [true, h[1]] : [place == "memory", null];
}

/** get returns a stored string, or null when absent or storage is unusable. */
export function get(area: Area, key: string): string | null {
  if (place != "browser") {
    const [found, value] = heldValue(area, key);
    if (found) return value;
  }
  try {
    return window[area].getItem(key);
  } catch {
    return null;
  }
}

/** set stores a string and reports whether it was stored (false when full or blocked). */
export function set(area: Area, key: string, value: string): boolean {
  if (place != "browser") {
    held.set(area + "\n" + key, [area, value]);
    return true;
  }
  try {
    window[area].setItem(key, value);
    return true;
  } catch {
    return false;
  }
}

/** getJSON parses a stored JSON value, or returns undefined. */
export function getJSON<T>(area: Area, key: string): T | undefined {
  try {
    return JSON.parse(get(area, key) || "null") ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * persist stores a long-lived value in localStorage, or in a first-party cookie
 * (one year, SameSite=Lax) when localStorage is unavailable.
 */
export function persist(key: string, value: string): void {
  if (place != "browser") {
    held.set("persist\n" + key, ["persist", value]);
    return;
  }
  if (!set("localStorage", key, value)) {
    try {
      document.cookie = key + "=" + encodeURIComponent(value) + ";max-age=31536000;path=/;SameSite=Lax";
    } catch {
      // Cookies blocked too: the value lives in memory for this page only.
    }
  }
}

/** recall reads a value written by persist. */
export function recall(key: string): string | null {
  if (place != "browser") {
    const [found, value] = heldValue("persist", key);
    if (found) return value;
  }
  const v = get("localStorage", key);
  if (v) return v;
  try {
    const m = document.cookie.match("(?:^|; )" + key + "=([^;]*)");
    return m ? decodeURIComponent(m[1]) : null;
  } catch {
    return null;
  }
}

/** forget removes a value written by persist, from localStorage and the cookie. */
export function forget(key: string): void {
  if (place != "browser") {
    held.set("persist\n" + key, ["persist", null]);
    return;
  }
  try {
    localStorage.removeItem(key);
  } catch {
    // Storage blocked: nothing was stored there.
  }
  try {
    document.cookie = key + EXPIRED;
  } catch {
    // Cookies blocked too.
  }
}

/**
 * forgetAll removes everything the SDK stored, wherever it is: the browser's storages and
 * cookies, and the writes held in memory (a visitor who opts out keeps no id).
 */
export function forgetAll(): void {
  held.clear();
  wipe();
}

/** wipe removes every key the SDK stored in the browser: both storages and the cookies. */
function wipe(): void {
  for (const area of ["localStorage", "sessionStorage"] as const) {
    try {
      const s = window[area];
      const keys: string[] = [];
      for (let i = 0; i < s.length; i++) {
        const k = s.key(i);
        if (k && k.startsWith(PREFIX)) keys.push(k);
      }
      for (const k of keys) s.removeItem(k);
    } catch {
      // Storage blocked: nothing was stored there.
    }
  }
  try {
    for (const c of document.cookie.split(";")) {
      const name = c.split("=")[0].trim();
      if (name.startsWith(PREFIX)) document.cookie = name + EXPIRED;
    }
  } catch {
    // Cookies blocked too.
  }
}
