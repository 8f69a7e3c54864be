/** The keys feature's own types, shared by its service and its store (the store imports no service). */
import type { Env } from "../../lib/envs";
import type { RateRule } from "../../lib/rate-limit";

export const KEY_TYPES = ["admin", "client", "server", "browser"] as const;

export type KeyType = (typeof KEY_TYPES)[number];

export type SdkKey = {
  id: string;
  projectId: string;
  type: KeyType;
  name: string;
  scopes: string[];
  allowedOrigin: string | null;
  /** Every browser origin the key admits (the project's domain and allowed origins); null admits any. */
  allowedOrigins: string[] | null;
  /** The one env a browser key evaluates; null for every other type. */
  env: Env | null;
  createdAt: string;
  lastUsedAt: string | null;
};

/**
 * What one browser key may cost (it ships inside apps anyone can run). `perKey` is shared by every server to
 * within about a second of each server's calls (SyncedRateLimiter); the others are counted per server process.
 * `ServerOptions.browserKeys` changes them (tests use small ones).
 */
export type BrowserKeyLimits = {
  /** Ingest calls (events, errors, Sentry) one browser key may make, from all addresses together. */
  perKey: RateRule;
  /** Ingest calls one client address may make with the browser keys of one project. */
  perAddress: RateRule;
  /** Largest ingest body a browser key may send, in bytes (413 `Body too large` above). */
  maxBodyBytes: number;
  /** New event names browser keys may add to a project's catalog (pending rows) a day; past it the events are stored, uncatalogued. */
  newEventNamesPerDay: number;
  /** New tracked errors (fingerprints) browser keys may start a project tracking an hour; past it those occurrences are dropped. */
  newErrorsPerHour: number;
  /** Attribute names browser keys' contexts and event properties may report for a project a day (auto-inferred attributes). */
  newAttributesPerDay: number;
};

export const DEFAULT_BROWSER_KEY_LIMITS: BrowserKeyLimits = {
  perKey: { limit: 20_000, windowMs: 60_000 },
  perAddress: { limit: 300, windowMs: 60_000 },
  maxBodyBytes: 64 * 1024,
  newEventNamesPerDay: 100,
  newErrorsPerHour: 100,
  newAttributesPerDay: 100,
};
