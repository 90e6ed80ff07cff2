/**
 * MurmurHash3, x86 32-bit variant, seed 0, over the UTF-8 bytes of `s`.
 *
 * Variant assignment must agree byte for byte with the Go server and SDK
 * (docs/flags.md, "Buckets"), so this follows the reference implementation
 * exactly; sdk/browser/test/assignment.json pins the results, and both
 * TypeScript SDKs build this one file (README.md here). It is synchronous and
 * about 300 bytes minified, which is why the design picked it over SHA-256
 * (crypto.subtle is async and absent on insecure origins); the browser SDK also
 * uses it for session sampling.
 */
export function murmur3(s: string): number {
  const b = new TextEncoder().encode(s);
  const n = b.length;
  const tail = n & ~3;
  let h = 0;
  let k: number;
  let i = 0;
  for (; i < tail; i += 4) {
    k = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
    h ^= mix(k);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  k = 0;
  switch (n & 3) {
    case 3:
      k ^= b[i + 2] << 16;
    // falls through
    case 2:
      k ^= b[i + 1] << 8;
    // falls through
    case 1:
      k ^= b[i];
      h ^= mix(k);
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mix scrambles one 32-bit block (the c1/c2 step of MurmurHash3). */
function mix(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}

/**
 * bucket places a user in 0..9999 for one purpose (`salt`: "rollout", "variant" or
 * "holdout") of one flag. Different salts make the three decisions independent.
 */
export function bucket(salt: string, flagKey: string, distinctId: string): number {
  return murmur3(salt + ":" + flagKey + ":" + distinctId) % 10000;
}
