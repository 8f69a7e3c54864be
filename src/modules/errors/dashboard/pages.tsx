import { useState } from "preact/hooks";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, Link, Loading, SearchBox, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { ERROR_STATUSES, type ErrorStatus, StatusBadge, loadErrors } from "./client";
import { ErrorDetail } from "./detail";

const count = new Intl.NumberFormat();

/** Tracked errors, most recently seen first: narrowed by status and searched by type and message; each opens its page. */
function ErrorList() {
  const session = useSession();
  const [status, setStatus] = useState<ErrorStatus | "">("");
  const [q, setQ] = useState("");
  const { data, error, reload } = useLoad(() => loadErrors(status || undefined), [session.project.id, status]);
  useLiveReload(reload);
  const needle = q.toLowerCase();
  const shown = data?.filter((e) => !q || e.type.toLowerCase().includes(needle) || e.message.toLowerCase().includes(needle));
  return (
    <>
      <h1>Errors</h1>
      <p class="muted">
        What SDKs report (<code>POST /api/sdk/v1/errors</code>, or any Sentry SDK with the server key as its DSN), grouped by type and stack.
      </p>
      <div class="row">
        <SearchBox label="Search errors" value={q} onInput={setQ} />
        <select aria-label="Status" value={status} onChange={(e) => setStatus(e.currentTarget.value as ErrorStatus | "")}>
          <option value="">Any status</option>
          {ERROR_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <ErrorMessage error={error} />
      {!data ? (
        !error && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? (status ? `No ${status} errors.` : "No errors reported yet.") : `No error matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Errors with their occurrences, affected units, when last seen and status, most recent first</caption>
          <thead>
            <tr>
              <th scope="col">Error</th>
              <th scope="col">Occurrences</th>
              <th scope="col">Affected units</th>
              <th scope="col">Last seen</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {shown!.map((e) => (
              <tr key={e.id}>
                <th scope="row">
                  <Link href={`/errors/${encodeURIComponent(e.id)}`}>
                    <span class="mono">{e.type}</span>: {e.message}
                  </Link>
                  {e.culprit && <div class="muted small mono">{e.culprit}</div>}
                </th>
                <td>{count.format(e.count)}</td>
                <td>{count.format(e.affectedUnits)}</td>
                <td>
                  <When iso={e.lastSeenAt} />
                </td>
                <td>
                  <StatusBadge status={e.status} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function ErrorsCard() {
  const session = useSession();
  const { data } = useLoad(() => loadErrors(), [session.project.id]);
  if (!data) return <Loading />;
  const open = data.filter((e) => e.status === "unresolved" || e.status === "regressed").length;
  const regressed = data.filter((e) => e.status === "regressed").length;
  return (
    <>
      <Link href="/errors">
        <strong>{open}</strong> unresolved {open === 1 ? "error" : "errors"}
      </Link>
      <span class="muted"> · {regressed} regressed</span>
    </>
  );
}

export const errorsDashboard: DashboardModule = {
  pages: [
    { path: "/errors", title: "Errors", nav: { label: "Errors", order: 45 }, view: ErrorList },
    { path: "/errors/:id", title: (p) => `Error ${p.id}`, view: ({ params }) => <ErrorDetail id={params.id!} /> },
  ],
  overview: ErrorsCard,
};
