/** What people can set; `regressed` is set by svc when a resolved error happens again. */
export const SETTABLE_STATUSES = ["unresolved", "resolved", "ignored"] as const;
export const ERROR_STATUSES = [...SETTABLE_STATUSES, "regressed"] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];
export type SettableStatus = (typeof SETTABLE_STATUSES)[number];

/** Occurrences per POST /api/sdk/v1/errors (and events per Sentry envelope). */
export const MAX_ERRORS_PER_CALL = 1000;

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
