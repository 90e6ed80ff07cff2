/** uuid returns a random (version 4) UUID, the event id the server deduplicates on. */
export function uuid(): string {
  const c = globalThis.crypto;
  if (c && c.randomUUID) {
    try {
      return c.randomUUID();
    } catch {
      // randomUUID exists only on secure origins in some browsers; fall through.
    }
  }
  const b = new Uint8Array(16);
  if (c && c.getRandomValues) c.getRandomValues(b);
  else for (let i = 0; i < 16; i++) b[i] = (Math.random() * 256) | 0;
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => (x + 256).toString(16).slice(1)).join("");
  return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
}
