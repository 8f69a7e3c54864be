import { AsyncLocalStorage } from "node:async_hooks";
import type { AuditActor } from "./audit";
import type { Env } from "./envs";
import type { Tx } from "./store";

/**
 * The direct-publish guard (change requests, issue 30): on an env that requires approval, a publish that does not
 * come through an approved change request (or a schedule holding one) is refused. The publishing paths call
 * `guardPublish` (versioned.ts for killswitches, configs and gates; segments and rollouts themselves); the requests
 * module installs the check, which reads its policy through the caller's transaction. The approved path runs its
 * publishes inside `runApproved`, an async context, so no service signature has to carry "this one is approved".
 */

export type PublishAttempt = {
  projectId: string;
  /** null: every env (a segment). */
  env: Env | null;
  /** `killswitches`, `configs`, `gates`, `segments`, `rollouts`. */
  resource: string;
  /** The entity's id (or name when that is all the caller has). */
  subject: string;
  actor: AuditActor;
  /** The reason a killswitch toggle gave to bypass approval (see `runBypass`). */
  bypassReason?: string;
  /** The change kind a request would carry instead (`killswitch.create`), named in the refusal; a creation never bypasses. */
  kind?: string;
};

export type PublishGuard = (tx: Tx, attempt: PublishAttempt) => Promise<void>;

/** Who holds an approved change (`{type: "request", id: "cr_…"}`), for the audit rows of what it publishes. */
export type ApprovalHolder = { type: string; id: string };

type Context = { approved: true; holder?: ApprovalHolder } | { approved: false; bypassReason: string };
const context = new AsyncLocalStorage<Context>();
let guard: PublishGuard | null = null;

/** Installed by the requests module at start (the same function on every server of a process: it reads the store it is given). */
export function setPublishGuard(g: PublishGuard): void {
  guard = g;
}

/** Runs `fn` as the approved path: publishes in it pass the guard (an approved request's apply, a scheduled step). */
export function runApproved<T>(fn: () => Promise<T>, holder?: ApprovalHolder): Promise<T> {
  return context.run({ approved: true, holder }, fn);
}

/** The holder `runApproved` was given, when `fn` runs inside it (an audit row may name the request it applies). */
export function approvalHolder(): ApprovalHolder | undefined {
  const ctx = context.getStore();
  return ctx?.approved ? ctx.holder : undefined;
}

/** Runs `fn` as an emergency bypass with its reason: the guard lets a killswitch through when the project allows it, and audits the bypass. */
export function runBypass<T>(reason: string, fn: () => Promise<T>): Promise<T> {
  return context.run({ approved: false, bypassReason: reason }, fn);
}

/** Called by every publishing path inside its transaction: throws APPROVAL_REQUIRED when the env requires approval. */
export async function guardPublish(tx: Tx, attempt: Omit<PublishAttempt, "bypassReason">): Promise<void> {
  const ctx = context.getStore();
  if (!guard || ctx?.approved) return;
  await guard(tx, ctx ? { ...attempt, bypassReason: ctx.bypassReason } : attempt);
}
