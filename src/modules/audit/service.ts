import type { AuditRow } from "../../lib/audit";
import { validation } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { type AuditFilter, listAuditRows } from "./store";

export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 500;

export type AuditQuery = {
  limit?: number;
  before?: number;
  action?: string;
  q?: string;
  actor?: string;
  resource?: string;
  since?: string;
  until?: string;
};

/** What `newId` makes (`ksw_` and 20 letters or digits) or a project's UUID: such a `resource` names one subject. */
const SUBJECT_ID = /^[A-Za-z0-9]{1,16}_[A-Za-z0-9]{20}$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A resource type: the part of an action before its first dot (`killswitch`, `alert_rule`, `i18n_key`). */
const RESOURCE_TYPE = /^(?=.{1,40}$)[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
/** A date, or a date and time with seconds optional, fraction optional and a zone required (no guessing a local time). */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/i;

/** The actor a key or token writes as (src/lib/auth.ts, the tokens module): its id is group 1 (a key) or 2 (a token). */
const ACTOR_CREDENTIAL = /^(?:admin|server|client)-key:(key_[A-Za-z0-9]+)@keys\.local$|^api-token:(tok_[A-Za-z0-9]+)@tokens\.local$/;

/** ASCII letters only, as SQL's lower() on both engines (PostgreSQL's in the C collation). */
function lowerAscii(text: string): string {
  return text.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * An ISO 8601 timestamp as the audit table stores it (`toISOString()`, so
 * that text order is time order on both engines); a date alone is midnight
 * UTC. Anything else, or a day that does not exist, is VALIDATION naming the field.
 */
export function parseTimestamp(field: string, input: string): string {
  const bad = () => validation(`${field} must be an ISO 8601 timestamp`, `${field}: like 2026-11-23T10:15:00Z, 2026-11-23T11:15:00+01:00 or 2026-11-23`);
  // A '+' of a zone that reached us unencoded in a query string arrives as a space.
  const text = input.trim().replace(/ (\d{2}:?\d{2})$/, "+$1");
  const m = ISO_8601.exec(text);
  if (!m) throw bad();
  const [, y, mo, d, h = "00", mi = "00", s = "00"] = m;
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (day.getUTCFullYear() !== Number(y) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) throw bad();
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) throw bad();
  // The form every engine's Date.parse reads: upper case, a zone with a colon, milliseconds at most.
  const normal = text.toUpperCase().replace(/\.(\d{3})\d+/, ".$1").replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
  const ms = Date.parse(m[4] === undefined ? `${y}-${mo}-${d}T00:00:00Z` : normal);
  if (!Number.isFinite(ms)) throw bad();
  return new Date(ms).toISOString();
}

/**
 * The audit trail: every module writes its rows through src/lib/audit.ts in
 * the transaction of its change; this module only reads them. A project's
 * trail is its own rows plus its organisation's rows that belong to no
 * project (members, CLI sign-ins), so that whoever administers a project
 * sees who joined and who signed in a CLI there. Rows happen in one
 * organisation only: a person in several shows each just what they did there.
 */
export class AuditService {
  constructor(private readonly ctx: ServiceContext) {}

  /**
   * Actor email → the name of the key or token it stands for (`admin-key:key_…@keys.local` → "deploy-bot"), for
   * this project's keys and tokens among `emails`; a person, an unnamed key or another project's credential has none.
   */
  async actorNames(projectId: string, emails: Iterable<string>): Promise<Map<string, string>> {
    const keys = new Map<string, string>();
    const tokens = new Map<string, string>();
    for (const email of new Set(emails)) {
      const m = ACTOR_CREDENTIAL.exec(email);
      if (m?.[1]) keys.set(email, m[1]);
      else if (m?.[2]) tokens.set(email, m[2]);
    }
    const [keyNames, tokenNames] = await Promise.all([this.ctx.services.keys.names(projectId, [...keys.values()]), this.ctx.services.tokens.names(projectId, [...tokens.values()])]);
    const names = new Map<string, string>();
    for (const [email, id] of keys) if (keyNames.has(id)) names.set(email, keyNames.get(id)!);
    for (const [email, id] of tokens) if (tokenNames.has(id)) names.set(email, tokenNames.get(id)!);
    return names;
  }

  /** Each row with `actorName`: the name of the key or token that acted, or null. */
  async withActorNames<R extends { actorEmail: string }>(projectId: string, rows: R[]): Promise<(R & { actorName: string | null })[]> {
    const names = await this.actorNames(projectId, rows.map((r) => r.actorEmail));
    return rows.map((r) => ({ ...r, actorName: names.get(r.actorEmail) ?? null }));
  }

  async list(projectId: string, query: AuditQuery = {}): Promise<{ entries: (AuditRow & { actorName: string | null })[]; nextBefore: number | null }> {
    const limit = query.limit ?? AUDIT_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT) {
      throw validation(`limit must be an integer from 1 to ${AUDIT_MAX_LIMIT}`, `limit: must be an integer from 1 to ${AUDIT_MAX_LIMIT}`);
    }
    if (query.before !== undefined && (!Number.isSafeInteger(query.before) || query.before < 1)) {
      throw validation("before must be a positive integer", "before: the `nextBefore` of the previous page");
    }
    const filter: AuditFilter = { limit: limit + 1, before: query.before, action: query.action, q: query.q };
    if (query.actor !== undefined) {
      const actor = query.actor.trim();
      if (actor === "") throw validation("actor must not be empty", "actor: an email, like ana@example.com");
      filter.actor = lowerAscii(actor);
    }
    if (query.resource !== undefined) {
      const resource = query.resource.trim();
      if (SUBJECT_ID.test(resource)) filter.subject = resource;
      else if (RESOURCE_TYPE.test(resource.toLowerCase())) filter.resource = resource.toLowerCase();
      else throw validation("resource must be a resource type or a subject id", "resource: a type like killswitch, key or member, or an id like ksw_…");
    }
    if (query.since !== undefined) filter.since = parseTimestamp("since", query.since);
    if (query.until !== undefined) filter.until = parseTimestamp("until", query.until);
    if (filter.since && filter.until && filter.since > filter.until) throw validation("until is before since", "until: must not be before since");
    const organisation = await this.ctx.services.projects.organisationOf(projectId);
    // One more row than asked tells whether an older page exists.
    const rows = await listAuditRows(this.ctx.store, { projectId, organisationId: organisation?.id ?? null }, filter);
    const entries = rows.slice(0, limit);
    return { entries: await this.withActorNames(projectId, entries), nextBefore: rows.length > limit ? entries[entries.length - 1]!.seq : null };
  }
}
