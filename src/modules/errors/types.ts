/** What people can set; `regressed` is set by svc when a resolved error happens again. */
export const SETTABLE_STATUSES = ["unresolved", "resolved", "ignored"] as const;
export const ERROR_STATUSES = [...SETTABLE_STATUSES, "regressed"] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

/** Occurrences per POST /api/sdk/v1/errors (and events per Sentry envelope). */
export const MAX_ERRORS_PER_CALL = 1000;

/**
 * New errors (fingerprints the project has not seen) one project may start
 * tracking per minute, per server process. Occurrences of further new
 * fingerprints that minute are dropped and the answer says so; errors
 * already tracked keep counting.
 */
export const NEW_ERRORS_PER_MINUTE = 1000;

/**
 * Queue items svc may open (file, or reopen when done) for one project's
 * new and regressed errors per minute, per server process. Over it the
 * error is still tracked, without an item, and the answer says so.
 */
export const ERROR_ITEMS_PER_MINUTE = 100;

/** A tracked error as the API shows it. */
export type TrackedError = {
  id: string;
  fingerprint: string;
  type: string;
  message: string;
  culprit: string | null;
  status: ErrorStatus;
  count: number;
  affectedUnits: number;
  firstSeenAt: string;
  lastSeenAt: string;
  statusChangedAt: string | null;
  statusChangedBy: string | null;
};

/** The event-store name of an error's occurrences. */
export const errorEventName = (fingerprint: string) => `$error:${fingerprint}`;
