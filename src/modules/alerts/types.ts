// The alerts module's shapes, limits and action names: what its routes, store, evaluator and tools share.

export const COMPARATORS = ["gt", "gte", "lt", "lte"] as const;
export type Comparator = (typeof COMPARATORS)[number];
export type AlertState = "ok" | "firing";

export const NAME_MAX = 128;
export const WINDOW_HOURS_MAX = 720;
export const CHANNEL_MAX = 200;
export const URL_MAX = 2048;

/**
 * Where a rule's notifications go; null on the rule means the project
 * default. Open for the connectors to come (issue 15): what is accepted
 * today is checked, nothing else is taken.
 */
export type NotifyTarget = { connectorId?: string; channel?: string; webhookUrl?: string };

export type AlertRule = {
  id: string;
  name: string;
  metricId: string;
  threshold: number;
  comparator: Comparator;
  windowHours: number;
  enabled: boolean;
  notify: NotifyTarget | null;
  /** firing while the last evaluation's value met the comparison; ok otherwise (and while disabled). */
  state: AlertState;
  lastValue: number | null;
  lastCheckedAt: string | null;
  lastTransitionAt: string | null;
  createdAt: string;
  updatedAt: string;
};

export type AlertRuleInput = {
  name: string;
  metricId: string;
  threshold: number;
  comparator: Comparator;
  windowHours?: number;
  enabled?: boolean;
  notify?: NotifyTarget | null;
};

export type AlertRulePatch = {
  threshold?: number;
  comparator?: Comparator;
  windowHours?: number;
  enabled?: boolean;
  notify?: NotifyTarget | null;
  /** Never accepted: a body carrying it is IMMUTABLE_FIELD. */
  metricId?: unknown;
};

export type Actor = { email: string; type: string };

/** One state change of a rule, as the evaluator found it. */
export type AlertTransition = {
  kind: "fire" | "resolve";
  projectId: string;
  rule: AlertRule;
  /** The metric's value over the window. */
  value: number;
  /** The window evaluated, epoch seconds [from, to). */
  from: number;
  to: number;
  /** When it was evaluated (ISO). */
  at: string;
};

/** Delivers a transition (the server log today; connectors later). Failures are logged, never retried. */
export type AlertNotifier = (transition: AlertTransition) => void | Promise<void>;

export const ACTIONS = {
  create: "alert_rule.create",
  update: "alert_rule.update",
  delete: "alert_rule.delete",
  fire: "alert.fire",
  resolve: "alert.resolve",
} as const;

/** How often rules are evaluated unless AppOptions.alertsEveryMs says otherwise. */
export const EVALUATE_EVERY_MS = 60_000;
