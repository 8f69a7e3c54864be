import { nodeCrypto } from "../../lib/node-crypto";
import { randomBase62 } from "../../lib/ids";

/**
 * Webhook signatures: `X-Svc-Signature: t=<unix seconds>,v1=<hex>` where hex
 * is HMAC-SHA256(secret, "<t>.<raw body>") and the secret is the connector's
 * `whsec_…` string as UTF-8 bytes. Each attempt is signed anew (its own t).
 * A receiver recomputes it over the raw body, compares in constant time, and
 * refuses a t more than 5 minutes from its clock (replays).
 */
export const SIGNATURE_HEADER = "X-Svc-Signature";
export const SIGNATURE_TOLERANCE_S = 300;

export function newSigningSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

export function sign(secret: string, body: string, unixSeconds: number): string {
  const mac = nodeCrypto().createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/** What a receiver does (docs/api.md shows the same in a few lines): true when the header matches the body and is recent. */
export function verify(secret: string, body: string, header: string | null, nowSeconds = Math.floor(Date.now() / 1000), toleranceS = SIGNATURE_TOLERANCE_S): boolean {
  if (!header) return false;
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=", 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceS || !parts.v1) return false;
  const expected = Buffer.from(nodeCrypto().createHmac("sha256", secret).update(`${t}.${body}`).digest("hex"));
  const got = Buffer.from(parts.v1);
  return got.length === expected.length && nodeCrypto().timingSafeEqual(got, expected);
}
