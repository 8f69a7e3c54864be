import { nodeCrypto } from "./node-crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random base62 string (letters and digits only, so it matches `\w+` for Sentry DSNs). */
export function randomBase62(length: number): string {
  // Rejection sampling keeps the distribution uniform: 248 = 62 * 4.
  let out = "";
  while (out.length < length) {
    // The global Web Crypto CSPRNG: randomBase62 runs at every start, and node:crypto is loaded only when needed.
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Resource id with the spec's type prefix, e.g. `newId("ksw")` → `ksw_...`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}

export function newUuid(): string {
  return crypto.randomUUID();
}

/** Secrets are stored only as their SHA-256 (hex). Bun's one-shot hasher: it runs on every authenticated request. */
export function sha256Hex(value: string): string {
  return Bun.SHA256.hash(value, "hex");
}

export function nowIso(): string {
  return new Date().toISOString();
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). The CLI makes it, the device flow checks it, OIDC sends it. */
export function pkceChallenge(verifier: string): string {
  return nodeCrypto().createHash("sha256").update(verifier).digest("base64url");
}
