import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { TableHead } from "../../../web/dashboard/form-kit";
import { Actor, Badge, ErrorMessage, Field, Loading, When, errorsByField, useLoad } from "../../../web/dashboard/ui";
import type { auditRoutes } from "../routes";

const auditApi = apiOf<ReturnType<typeof auditRoutes>>();
type Page = Awaited<ReturnType<typeof loadPage>>;

/** What the filter form holds: `since`/`until` as a `datetime-local` value (the browser's own time zone). */
type Filter = { q: string; action: string; actor: string; resource: string; since: string; until: string };
const NO_FILTER: Filter = { q: "", action: "", actor: "", resource: "", since: "", until: "" };
const FIELDS = ["q", "action", "actor", "resource", "since", "until"] as const;
/** The resource types of the audit trail (the part of an action before its first dot), offered as suggestions. */
const RESOURCE_TYPES = ["killswitch", "config", "gate", "attribute", "universe", "experiment", "event", "metric", "alert_rule", "alert", "error", "ops", "connector", "i18n_profile", "i18n_key", "key", "token", "project", "member", "session", "device"];

/** A `datetime-local` value as the API's ISO 8601 time (read in the browser's time zone); empty stays empty. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const ms = new Date(local).getTime();
  // An unreadable value goes as typed: the server's refusal then names the field.
  return Number.isFinite(ms) ? new Date(ms).toISOString() : local;
}

function loadPage(filter: Filter, before?: number) {
  return call(
    auditApi.api.admin.audit.get({
      query: {
        q: filter.q || undefined,
        action: filter.action || undefined,
        actor: filter.actor.trim() || undefined,
        resource: filter.resource.trim() || undefined,
        since: isoOf(filter.since),
        until: isoOf(filter.until),
        before: before === undefined ? undefined : String(before),
      },
    }),
  );
}

function detailText(detail: unknown): string {
  if (detail === null || detail === undefined) return "";
  if (typeof detail !== "object") return String(detail);
  return Object.entries(detail as Record<string, unknown>)
    .map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(", ");
}

function AuditPage() {
  const session = useSession();
  const [filter, setFilter] = useState<Filter>(NO_FILTER);
  const [applied, setApplied] = useState<Filter>(NO_FILTER);
  // A refusal that names a filter (`since: …`) is shown on that field.
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<(typeof FIELDS)[number], string>>>({});
  // Older pages belong to one filter: a change of filter starts over, and a late reply for an old filter is dropped.
  const [more, setMore] = useState<{ filter: Filter; entries: Page["entries"]; next: number | null } | null>(null);
  const [moreError, setMoreError] = useState<string | null>(null);
  const { data, error } = useLoad(async () => {
    try {
      const page = await loadPage(applied);
      setFieldErrors({});
      return page;
    } catch (err) {
      setFieldErrors(errorsByField(err, FIELDS).fields);
      focusFirstInvalidFilter();
      throw err;
    }
  }, [session.project.id, ...FIELDS.map((f) => applied[f])]);
  const current = more && more.filter === applied ? more : null;
  const older = current?.entries ?? [];
  const next = current ? current.next : data?.nextBefore;
  const entries = [...(data?.entries ?? []), ...older];
  const filtered = FIELDS.some((f) => applied[f] !== "");
  const bind = (name: (typeof FIELDS)[number]) => ({
    value: filter[name],
    onInput: (e: Event) => setFilter({ ...filter, [name]: (e.target as HTMLInputElement).value }),
  });
  return (
    <>
      <h1>Audit trail</h1>
      <p class="muted">
        Every change in this project, newest first, recorded in the same transaction as the change itself; with the organisation's own events (members, sign-ins, CLI sign-ins), marked <em>organisation</em>.
      </p>
      <form
        aria-label="Filter the audit trail"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filter);
        }}
      >
        <div class="form-grid">
          <Field label="Name or email" hint="Any part of it" error={fieldErrors.q}>
            {(attrs) => <input {...attrs} type="search" {...bind("q")} />}
          </Field>
          <Field label="Actor email" hint="The whole email, e.g. ana@example.com" error={fieldErrors.actor}>
            {(attrs) => <input {...attrs} type="search" {...bind("actor")} />}
          </Field>
          <Field label="Action" hint="e.g. killswitch.toggle, or config. for all" error={fieldErrors.action}>
            {(attrs) => <input {...attrs} type="text" {...bind("action")} />}
          </Field>
          <Field label="Resource" hint="A type (killswitch, member, session…) or an id (ksw_…)" error={fieldErrors.resource}>
            {(attrs) => <input {...attrs} type="text" list="audit-resource-types" {...bind("resource")} />}
          </Field>
          <Field label="From" hint="Your local time" error={fieldErrors.since}>
            {(attrs) => <input {...attrs} type="datetime-local" step={1} {...bind("since")} />}
          </Field>
          <Field label="Until" hint="Before this time" error={fieldErrors.until}>
            {(attrs) => <input {...attrs} type="datetime-local" step={1} {...bind("until")} />}
          </Field>
        </div>
        <datalist id="audit-resource-types">
          {RESOURCE_TYPES.map((r) => (
            <option key={r} value={r} />
          ))}
        </datalist>
        <div class="row">
          <button type="submit" class="secondary">
            Filter
          </button>
          {/* "Reset", not "Clear filters": a second button whose name holds "Filter" would be a near-twin of the first to voice control. */}
          {(filtered || FIELDS.some((f) => filter[f] !== "")) && (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setFilter(NO_FILTER);
                setApplied(NO_FILTER);
              }}
            >
              Reset
            </button>
          )}
        </div>
      </form>
      <ErrorMessage error={(Object.keys(fieldErrors).length > 0 ? null : error) ?? moreError} />
      {!data ? (
        !error && <Loading />
      ) : entries.length === 0 ? (
        <p class="muted">Nothing recorded{filtered ? " matches" : " yet"}.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Audit trail, newest first</caption>
          <TableHead columns={["When", "Who", "Action", "Subject", "Env", "Details"]} />
          <tbody>
            {entries.map((e) => (
              <tr key={e.seq}>
                <td>
                  <When iso={e.createdAt} />
                </td>
                <td>
                  <Actor email={e.actorEmail} name={e.actorName} />
                  {e.actorType !== "user" && <span class="muted small"> ({e.actorType})</span>}
                </td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>{e.subjectName ?? <span class="muted">–</span>}</td>
                <td>{e.projectId === null ? <Badge>organisation</Badge> : (e.env ?? "")}</td>
                <td class="small wrap-anywhere">{detailText(e.detail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== null && next !== undefined && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            const filter = applied;
            try {
              const page = await loadPage(filter, next);
              setMore((m) => {
                const base = m && m.filter === filter ? m.entries : [];
                return { filter, entries: [...base, ...page.entries], next: page.nextBefore };
              });
              setMoreError(null);
            } catch (err) {
              setMoreError(describeError(err));
            }
          }}
        >
          Show older entries
        </button>
      )}
    </>
  );
}

/** After a refusal, the first filter it named takes the focus (the form is not in a dialog, so `focusFirstInvalid` does not reach it). */
function focusFirstInvalidFilter(): void {
  setTimeout(() => document.querySelector<HTMLElement>('form[aria-label="Filter the audit trail"] [aria-invalid="true"]')?.focus(), 0);
}

export const auditDashboard: DashboardModule = {
  pages: [{ path: "/audit", title: "Audit trail", nav: { label: "Audit trail", order: 95, group: "project" }, view: AuditPage }],
};
