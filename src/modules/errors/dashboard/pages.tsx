import { useState } from "preact/hooks";
import { listAndDetail, overviewCard } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, useSession } from "../../../web/dashboard/registry";
import { FilterSelect, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, When } from "../../../web/dashboard/ui";
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
      filters={<FilterSelect bare label="Status" any="Any status" value={status} onChange={(s) => setStatus(s as ErrorStatus | "")} options={ERROR_STATUSES.map((s) => ({ value: s, text: s }))} />}
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

export const errorsDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/errors", title: "Errors", order: 45, group: "observe", empty: { about: "Errors your services report (with the SDK, or any Sentry SDK) are grouped here with their counts and the people they hit.", command: "svc.captureError(err, { unitId: user.id })" }, list: ErrorList, param: "id", one: (id) => `Error ${id}`, detail: (id) => <ErrorDetail id={id} /> }),
  overview: overviewCard(loadErrors, (list) => {
    const open = list.filter((e) => e.status === "unresolved" || e.status === "regressed").length;
    return { href: "/errors", count: open, label: `unresolved ${open === 1 ? "error" : "errors"}`, more: `${list.filter((e) => e.status === "regressed").length} regressed` };
  }),
};
