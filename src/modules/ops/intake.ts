import { ApiError, bodyTooLarge, validation } from "../../lib/errors";
import { jsonObjectOf } from "../../lib/http-values";
import type { RateRule } from "../../lib/rate-limit";
import { UsageError } from "../../lib/usage-error";

/**
 * The public intake's limits (counted in the store, so several servers
 * behind a balancer share them: src/lib/rate-limit.ts SharedRateLimiter).
 * - `perKey`: requests per client key (SERVICE_INTAKE_LIMIT_PER_KEY, per minute);
 * - `perAddress`: requests per client address, the peer or what a trusted
 *   proxy forwarded (SERVICE_INTAKE_LIMIT_PER_ADDRESS, per minute);
 * - `maxBodyBytes`: largest intake body (SERVICE_INTAKE_MAX_BODY_BYTES).
 * Over a rate limit: 429 `{error: "Too many requests", code: "BAD_REQUEST"}`
 * with Retry-After; over the body limit: 413 `{error: "Body too large", code: "BAD_REQUEST"}`.
 */
export type IntakeOptions = { perKey: RateRule; perAddress: RateRule; maxBodyBytes: number };

export const DEFAULT_INTAKE_OPTIONS: IntakeOptions = {
  perKey: { limit: 600, windowMs: 60_000 },
  perAddress: { limit: 60, windowMs: 60_000 },
  maxBodyBytes: 32 * 1024,
};

function positiveInteger(env: Record<string, string | undefined>, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === "") return undefined;
  if (!/^\d{1,12}$/.test(text) || Number(text) < 1) throw new UsageError(`${name}: must be a whole number of at least 1 (was "${text}")`);
  return Number(text);
}

/** `svc serve`'s intake settings from its environment; a malformed value stops the start. */
export function intakeOptionsFromEnv(env: Record<string, string | undefined>): Partial<IntakeOptions> {
  const out: Partial<IntakeOptions> = {};
  const perKey = positiveInteger(env, "SERVICE_INTAKE_LIMIT_PER_KEY");
  const perAddress = positiveInteger(env, "SERVICE_INTAKE_LIMIT_PER_ADDRESS");
  const maxBody = positiveInteger(env, "SERVICE_INTAKE_MAX_BODY_BYTES");
  if (perKey !== undefined) out.perKey = { limit: perKey, windowMs: 60_000 };
  if (perAddress !== undefined) out.perAddress = { limit: perAddress, windowMs: 60_000 };
  if (maxBody !== undefined) out.maxBodyBytes = maxBody;
  return out;
}

/**
 * How long the intake's hot path trusts what it looked up (see ExpiringCache): an origin's answer (CORS
 * preflights carry no key, so each would ask the store) 5 s; a project's intake settings 1 s. The filing
 * transaction checks the opt-in again, so a project that just turned it off files nothing; a project that just
 * opted in is never refused from memory (a refusal is a failed lookup, not kept); a domain change clears both.
 */
export const INTAKE_CACHES = { origins: { ttlMs: 5_000, max: 1_000 }, settings: { ttlMs: 1_000, max: 1_000 } };

export const BODY_ERROR = Symbol("intake body error");
const UTF8 = new TextDecoder();
export type IntakeBody = Record<string, unknown> & { [BODY_ERROR]?: ApiError };

/**
 * The intake's own body reader (the global limit is the server's; this one
 * is the intake's, smaller). It never throws: a problem is kept on the
 * result and raised by the route's gate after the credential and rate
 * checks, so a caller without a key, or over its limit, learns nothing
 * about the body rules and costs no parsing.
 */
export function intakeBodyParser(maxBytes: () => number) {
  return async ({ request }: { request: Request }): Promise<IntakeBody> => {
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > maxBytes()) return { [BODY_ERROR]: bodyTooLarge() };
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes()) return { [BODY_ERROR]: bodyTooLarge() };
    const text = UTF8.decode(bytes);
    if (text.trim() === "") return { [BODY_ERROR]: validation("Request failed validation", "title: is required") };
    const body = jsonObjectOf(text);
    return body instanceof ApiError ? { [BODY_ERROR]: body } : body;
  };
}
