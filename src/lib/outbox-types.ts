/**
 * The outbox's event types (lib/outbox.ts), in a file that imports nothing:
 * the dashboard's connector form and the CLI list them too.
 */
export const OUTBOX_EVENT_TYPES = [
  "bug.created",
  "feature_request.created",
  "ticket.approved",
  "alert.firing",
  "alert.resolved",
  "error.new",
  "error.regressed",
  "config.published",
  "killswitch.toggled",
  "experiment.rolled_back",
  "rollout.advanced",
  "rollout.completed",
  "rollout.paused",
  "rollout.rolled_back",
  "flags.stale_digest",
  "request.opened",
  "request.approved",
  "request.rejected",
  "request.applied",
  "request.withdrawn",
  "request.stale",
  "request.rebased",
] as const;
export type OutboxEventType = (typeof OUTBOX_EVENT_TYPES)[number];
