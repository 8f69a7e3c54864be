import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { listAndDetail, useCreateThenOpen } from "../../../web/dashboard/detail-frame";
import { FilterSelect, ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Badge, Link, When } from "../../../web/dashboard/ui";
// Constants only (types.ts imports nothing at run time).
import { STATES } from "../types";
import { type ChangeRequest, TONE, loadRequests, requestApi, requestHref } from "./client";
import { RequestDetail } from "./detail";
import { OpenRequestDialog } from "./open";

/** The proposed changes: each one's summary, what it was made against (the diff's "before"), and the change itself. */
function Changes({ r }: { r: ChangeRequest }) {
  return (
    <ol class="small schedule-steps">
      {r.changes.map((c) => (
        <li>
          {c.summary} <span class="muted">(against {c.fingerprint})</span>
          <details>
            <summary>Proposed change</summary>
            <pre class="mono small">{JSON.stringify(c.change, null, 2)}</pre>
          </details>
        </li>
      ))}
    </ol>
  );
}

/**
 * Change requests, newest first: title and reason, the changes with what they were made against, approvals, and the
 * decisions people may take (approve, reject) and the apply of an approved one. The server says who may: only people
 * approve, never their own request; a refusal shows above the list.
 */
function RequestList() {
  const session = useSession();
  const writable = can(session, "write");
  const [q, setQ] = useState("");
  const [state, setState] = useState("");
  const list = useLiveList(() => loadRequests({ ...(q.trim() ? { q: q.trim() } : {}), ...(state ? { state } : {}) }), [session.project.id, q, state]);
  const rows = useRowDialogs<ChangeRequest>(list.reload);
  const create = useCreateThenOpen(requestHref);
  const filtered = q.trim() !== "" || state !== "";
  const act = async (r: ChangeRequest, verb: "approve" | "reject" | "apply", done: string) => {
    try {
      const one = requestApi.api.admin.requests({ id: r.id });
      const res = await call(verb === "reject" ? one.reject.post({}) : one[verb].post());
      await rows.done(`${done} ${res.id}: now ${res.state}.`);
    } catch (err) {
      await list.reload();
      rows.setError(describeError(err));
    }
  };
  return (
    <ResourceList
      title="Change requests"
      noun="change request"
      intro={
        <>
          Changes a second person approves before they are published, on the envs that require it. Open one here, with <code>svc requests open</code> or an agent's <code>open_change_request</code>;
          another person approves it, then it is applied exactly as approved. Each request's page shows its changes beside what is published now. A request whose target moved since it was opened goes
          stale.
        </>
      }
      search={{ value: q, onInput: setQ }}
      filtersClass="row filters"
      filters={<FilterSelect label="State" value={state} onChange={setState} options={STATES.map((s) => ({ value: s, text: s }))} />}
      items={list.data}
      create={writable && { label: "Open change request", onClick: create.open }}
      error={list.error ?? rows.error}
      message={rows.message}
      empty={filtered ? "No change request matches these filters." : undefined}
      caption="Change requests with their state, changes, approvals and author"
      rowKey={(r) => r.id}
      nameHeader="Request"
      name={(r) => (
        <>
          <Link href={requestHref(r)}>{r.title}</Link>
          {r.reason && <div class="muted small">{r.reason}</div>}
          <div class="muted small mono">{r.id}</div>
        </>
      )}
      columns={[
        { header: "State", cell: (r) => <Badge tone={TONE[r.state]}>{r.state}</Badge> },
        { header: "Changes", cell: (r) => <Changes r={r} /> },
        { header: "Approvals", cell: (r) => `${r.approvals.length}/${r.approvalsRequired}${r.approvals.length ? ` (${r.approvals.map((a) => a.by).join(", ")})` : ""}` },
        { header: "By", cell: (r) => r.author },
        { header: "Opened", cell: (r) => <When iso={r.createdAt} /> },
      ]}
      actions={
        writable &&
        ((r) => (
          <>
            {r.state === "open" && (
              <button type="button" class="small" aria-label={`Approve ${r.id}`} onClick={() => act(r, "approve", "Approved")}>
                Approve
              </button>
            )}
            {(r.state === "open" || r.state === "approved") && (
              <button type="button" class="danger secondary small" aria-label={`Reject ${r.id}`} onClick={() => act(r, "reject", "Rejected")}>
                Reject
              </button>
            )}
            {r.state === "approved" && (
              <button type="button" class="small" aria-label={`Apply ${r.id}`} onClick={() => act(r, "apply", "Applied")}>
                Apply
              </button>
            )}
          </>
        ))
      }
    >
      <OpenRequestDialog {...create.dialog} />
    </ResourceList>
  );
}

export const requestsDashboard: DashboardModule = {
  // The navigation says "Requests" (the first-hour test lists it so); the pages' title is "Change requests".
  pages: listAndDetail({
    path: "/requests",
    title: "Change requests",
    order: 54,
    group: "release",
    empty: { about: "A change request holds changes a second person approves before they are published, on the envs that require approval.", command: "svc requests open --title TEXT --file changes.json" },
    list: RequestList,
    param: "id",
    one: (id) => `Change request ${id}`,
    detail: (id) => <RequestDetail id={id} />,
  }).map((p) => (p.nav ? { ...p, nav: { ...p.nav, label: "Requests" } } : p)),
};
