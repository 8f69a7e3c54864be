import { UsageError } from "../../lib/config";
import type { BrowserKeyLimits } from "./types";

function positiveInteger(env: Record<string, string | undefined>, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text === "") return undefined;
  if (!/^\d{1,12}$/.test(text) || Number(text) < 1) throw new UsageError(`${name}: must be a whole number of at least 1 (was "${text}")`);
  return Number(text);
}

/** `svc serve`'s browser-key limits from its environment (SERVICE_BROWSER_*); a malformed value stops the start. */
export function browserKeyLimitsFromEnv(env: Record<string, string | undefined>): Partial<BrowserKeyLimits> {
  const out: Partial<BrowserKeyLimits> = {};
  const perKey = positiveInteger(env, "SERVICE_BROWSER_LIMIT_PER_KEY");
  const perAddress = positiveInteger(env, "SERVICE_BROWSER_LIMIT_PER_ADDRESS");
  if (perKey !== undefined) out.perKey = { limit: perKey, windowMs: 60_000 };
  if (perAddress !== undefined) out.perAddress = { limit: perAddress, windowMs: 60_000 };
  const numbers = {
    maxBodyBytes: "SERVICE_BROWSER_MAX_BODY_BYTES",
    newEventNamesPerDay: "SERVICE_BROWSER_NEW_EVENTS_PER_DAY",
    newErrorsPerHour: "SERVICE_BROWSER_NEW_ERRORS_PER_HOUR",
    newAttributesPerDay: "SERVICE_BROWSER_NEW_ATTRIBUTES_PER_DAY",
  } as const;
  for (const [field, name] of Object.entries(numbers) as [keyof typeof numbers, string][]) {
    const value = positiveInteger(env, name);
    if (value !== undefined) out[field] = value;
  }
  return out;
}
