import { useState } from "preact/hooks";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, Loading, When, useLoad } from "../../../web/dashboard/ui";
import { ERROR_STATUSES, type ErrorStatus, StatusBadge, loadErrors } from "./client";
import { ErrorDetail } from "./detail";

const count = new Intl.NumberFormat();

/** Tracked errors, most recently seen first: narrowed by status and searched by type and message; each opens its page. */
function ErrorList() {
  const session = useSession();
  const [status, setStatus] = useState<ErrorStatus | "">("");
  const { data, error } = useLiveList(() => loadErrors(status || undefined), [session.project.id, status]);
  return (
    <ResourceList
      title="Errors"
      noun="error"
      intro={
        <>
          What SDKs report (<code>POST /api/sdk/v1/errors</code>, or any Sentry SDK with the server key as its DSN), grouped by type and stack.
        </>
      }
      filters={
        <select aria-label="Status" value={status} onChange={(e) => setStatus(e.currentTarget.value as ErrorStatus | "")}>
          <option value="">Any status</option>
          {ERROR_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      }
      items={data}
      error={error}
      searchText={(e) => [e.type, e.message]}
      empty={status ? `No ${status} errors.` : "No errors reported yet."}
      caption="Errors with their occurrences, affected units, when last seen and status, most recent first"
      rowKey={(e) => e.id}
      nameHeader="Error"
      name={(e) => (
        <>
          <Link href={`/errors/${encodeURIComponent(e.id)}`}>
            <span class="mono">{e.type}</span>: {e.message}
          </Link>
          {e.culprit && <div class="muted small mono">{e.culprit}</div>}
        </>
      )}
      columns={[
        { header: "Occurrences", cell: (e) => count.format(e.count) },
        { header: "Affected units", cell: (e) => count.format(e.affectedUnits) },
        { header: "Last seen", cell: (e) => <When iso={e.lastSeenAt} /> },
        { header: "Status", cell: (e) => <StatusBadge status={e.status} /> },
      ]}
    />
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
    { path: "/errors", title: "Errors", nav: { label: "Errors", order: 45, group: "observe" }, empty: { about: "Errors your services report (with the SDK, or any Sentry SDK) are grouped here with their counts and the people they hit.", command: "svc.captureError(err, { unitId: user.id })" }, view: ErrorList },
    { path: "/errors/:id", title: (p) => `Error ${p.id}`, view: ({ params }) => <ErrorDetail id={params.id!} /> },
  ],
  overview: ErrorsCard,
};
