/** The change requests feature's own types and limits, shared by its service and store (the store imports no service). */
import type { ChangeTarget, StoredChange } from "../../lib/changes";
import type { Env } from "../../lib/envs";

/** open → approved → applied | rejected | withdrawn | stale (what it changes moved since it was opened). */
export const STATES = ["open", "approved", "applied", "rejected", "withdrawn", "stale"] as const;
export type RequestState = (typeof STATES)[number];

export const CHANGES_MAX = 20;
export const LIST_MAX = 500;
export const APPROVALS_MAX = 5;

export const ACTIONS = {
  open: "request.open",
  approve: "request.approve",
  reject: "request.reject",
  withdraw: "request.withdraw",
  apply: "request.apply",
  stale: "request.stale",
  rebase: "request.rebase",
  hold: "request.hold",
  release: "request.release",
  policy: "request.policy",
  bypass: "request.bypass",
} as const;

/** Per env: whether a publish there needs an approved request, and how many people must approve. */
export type EnvPolicy = { required: boolean; approvals: number };
export type Policy = { envs: Partial<Record<Env, EnvPolicy>>; killswitchBypass: boolean };
/** Off until turned on: no env requires approval; turned on, prod is the usual one. */
export const DEFAULT_POLICY: Policy = { envs: {}, killswitchBypass: false };

export type RequestChange = {
  /** 1-based, in apply order. */
  position: number;
  change: StoredChange;
  kind: string;
  target: ChangeTarget;
  env: Env | null;
  summary: string;
  /** What was published for its target when the request was opened (`version 7`); apply refuses when it moved. */
  fingerprint: string;
  /** One request only (GET by id): what is published now, in the shape of `proposed`; absent with `currentNote` saying why. */
  current?: unknown;
  /** One request only: the change's payload in the shape of `current`. */
  proposed?: unknown;
  currentNote?: string;
};

/** A kind of change a request can hold (GET /api/admin/requests/kinds). */
export type KindInfo = { kind: string; target: string; description: string; fields: string[]; required: string[]; diff: boolean };

/** The states whose changes are still to be published: their "published now" is read at each GET. */
export const PENDING: readonly RequestState[] = ["open", "approved", "stale"];

export type ChangeRequest = {
  id: string;
  title: string;
  reason: string | null;
  state: RequestState;
  author: string;
  approvalsRequired: number;
  approvals: { by: string; at: string }[];
  /** Who rejected, withdrew or applied it, and why it went stale. */
  decidedBy: string | null;
  note: string | null;
  /** The schedule holding it (sch_…): it publishes it at its time; null when none does. */
  heldBy: string | null;
  createdAt: string;
  updatedAt: string;
  changes: RequestChange[];
};

export type OpenInput = { title: string; reason?: string; changes: unknown[] };
