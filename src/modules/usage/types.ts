/** The usage module's own types and limits, shared by its counter, service and store (the store imports no service). */
import type { Env } from "../../lib/envs";

/** The kinds of flag that are counted (an OFREP key names one of them). */
export type FlagKind = "killswitch" | "gate" | "config" | "experiment";

/** One row to add: evaluations of one flag on one env and UTC day (`YYYY-MM-DD`), and the latest of them. */
export type CountRow = { projectId: string; flag: string; env: Env; day: string; count: number; lastAt: string };

/** Why a flag is stale: it served one value to everyone for N days, or nobody evaluated it for N days. */
export type StaleReason = "one_value" | "not_evaluated";

export type StaleFlag = {
  name: string;
  kind: Exclude<FlagKind, "experiment">;
  env: Env;
  reasons: StaleReason[];
  lastEvaluatedAt: string | null;
  lastChangedAt: string;
};

/** A 30-day series of one flag. */
export type FlagUsage = {
  name: string;
  env: Env | null;
  days: { day: string; count: number }[];
  total: number;
  lastEvaluatedAt: Record<Env, string | null>;
};

/** Days the usage series covers. */
export const USAGE_DAYS = 30;
/** How often counts are written (SERVICE_USAGE_FLUSH_MS): an upsert-add per (project, flag, env, day). */
export const DEFAULT_USAGE_FLUSH_MS = 5000;
/** How often the weekly stale digest is considered (each project gets one at most every DIGEST_EVERY_DAYS). */
export const DEFAULT_DIGEST_CHECK_MS = 3600_000;
export const DIGEST_EVERY_DAYS = 7;
/** Flags a digest lists at most (the rest are counted). */
export const DIGEST_FLAGS_MAX = 100;
/** Counter entries held at most between two flushes (names come from snapshots, so this is only a backstop). */
export const COUNTER_ENTRIES_MAX = 100_000;
/** Daily rows are kept this long (longer than the largest staleAfterDays). */
export const KEEP_DAYS = 400;

/** An SDK batch: names at most, and the most one name may add in one batch. */
export const BATCH_NAMES_MAX = 1000;
export const BATCH_COUNT_MAX = 10_000_000;

export const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of an epoch ms, in UTC. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
