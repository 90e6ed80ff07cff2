/**
 * Storage that never throws. localStorage and sessionStorage throw in some
 * privacy modes and when full; the SDK must keep working (in memory) then.
 */

type Area = "localStorage" | "sessionStorage";

/** get returns a stored string, or null when absent or storage is unusable. */
export function get(area: Area, key: string): string | null {
  try {
    return window[area].getItem(key);
  } catch {
    return null;
  }
}

/** set stores a string and reports whether it was stored (false when full or blocked). */
export function set(area: Area, key: string, value: string): boolean {
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
  try {
    localStorage.removeItem(key);
  } catch {
    // Storage blocked: nothing was stored there.
  }
  try {
    document.cookie = key + "=;max-age=0;path=/;SameSite=Lax";
  } catch {
    // Cookies blocked too.
  }
}
