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

/**
 * Occurrences kept per tracked error (table error_occurrences): the last
 * OCCURRENCES_RECENT received, and a uniform sample (reservoir) of
 * OCCURRENCES_SAMPLE among all older ones. Pruned in the transaction that
 * inserts, so never more than their sum.
 */
export const OCCURRENCES_RECENT = 20;
export const OCCURRENCES_SAMPLE = 5;

/** One stack frame of a kept occurrence, as the API shows it. */
export type OccurrenceFrame = {
  function?: string;
  filename?: string;
  /** Sentry's abs_path, when it differs from filename. */
  absPath?: string;
  module?: string;
  lineno?: number;
  colno?: number;
  inApp?: boolean;
  preContext?: string[];
  contextLine?: string;
  postContext?: string[];
};

/** What one kept occurrence holds (stored as JSON), every part bounded. */
export type OccurrenceData = {
  eventId: string | null;
  type: string;
  message: string;
  unitId: string | null;
  release: string | null;
  environment: string | null;
  tags: Record<string, string | number | boolean>;
  /** Innermost (the frame that threw) first. */
  frames: OccurrenceFrame[];
  /** Frames sent but not kept (beyond the bounds). */
  framesOmitted: number;
};

/** A kept occurrence as the API shows it. */
export type ErrorOccurrence = OccurrenceData & {
  id: string;
  ts: string;
  /** recent: one of the last OCCURRENCES_RECENT; sample: an older one kept as a sample. */
  kept: "recent" | "sample";
};

/** A tracked error with its kept occurrences, newest first (GET /api/admin/errors/{id}). */
export type TrackedErrorDetail = TrackedError & { occurrences: ErrorOccurrence[] };

/** The event-store name of an error's occurrences. */
export const errorEventName = (fingerprint: string) => `$error:${fingerprint}`;
