import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, Field, Loading, When, useLoad } from "../../../web/dashboard/ui";
import type { auditRoutes } from "../routes";

const auditApi = apiOf<ReturnType<typeof auditRoutes>>();
type Page = Awaited<ReturnType<typeof loadPage>>;

function loadPage(filter: { q: string; action: string }, before?: number) {
  return call(auditApi.api.admin.audit.get({ query: { q: filter.q || undefined, action: filter.action || undefined, before: before === undefined ? undefined : String(before) } }));
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
  const [filter, setFilter] = useState({ q: "", action: "" });
  const [applied, setApplied] = useState(filter);
  // Older pages belong to one filter: a change of filter starts over, and a late reply for an old filter is dropped.
  const [more, setMore] = useState<{ filter: typeof applied; entries: Page["entries"]; next: number | null } | null>(null);
  const [moreError, setMoreError] = useState<string | null>(null);
  const { data, error } = useLoad(() => loadPage(applied), [session.project.id, applied.q, applied.action]);
  const current = more && more.filter === applied ? more : null;
  const older = current?.entries ?? [];
  const next = current ? current.next : data?.nextBefore;
  const entries = [...(data?.entries ?? []), ...older];
  return (
    <>
      <h1>Audit trail</h1>
      <p class="muted">Every change in this project, newest first: recorded in the same transaction as the change itself.</p>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filter);
        }}
      >
        <Field label="Name or email">{(attrs) => <input {...attrs} type="search" value={filter.q} onInput={(e) => setFilter({ ...filter, q: (e.target as HTMLInputElement).value })} />}</Field>
        <Field label="Action" hint="e.g. killswitch.toggle, or config. for all">
          {(attrs) => <input {...attrs} value={filter.action} onInput={(e) => setFilter({ ...filter, action: (e.target as HTMLInputElement).value })} />}
        </Field>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <ErrorMessage error={error ?? moreError} />
      {!data ? (
        !error && <Loading />
      ) : entries.length === 0 ? (
        <p class="muted">Nothing recorded{applied.q || applied.action ? " matches" : " yet"}.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Audit trail, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Action</th>
              <th scope="col">Subject</th>
              <th scope="col">Env</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.seq}>
                <td>
                  <When iso={e.createdAt} />
                </td>
                <td>
                  {e.actorEmail}
                  {e.actorType !== "user" && <span class="muted small"> ({e.actorType})</span>}
                </td>
                <td>
                  <code>{e.action}</code>
                </td>
                <td>{e.subjectName ?? <span class="muted">–</span>}</td>
                <td>{e.env ?? ""}</td>
                <td class="small">{detailText(e.detail)}</td>
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

export const auditDashboard: DashboardModule = {
  pages: [{ path: "/audit", title: "Audit trail", nav: { label: "Audit trail", order: 95 }, view: AuditPage }],
};
