import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { ConfirmDialog, Link, Loading, When, useLoad } from "../../../web/dashboard/ui";
import { ITEM_TYPES, type ItemStatus, type ItemType, PRIORITY_LABELS, type QueueItem, STATUSES, STATUS_LABELS, StatusBadge, TYPE_LABELS, itemName, loadItems, opsApi } from "./client";
import { ItemDetail } from "./detail";
import { ItemDialog } from "./form";

/**
 * The approval queue: every item, those waiting for approval first (with
 * Approve and Reject on their row), then the newest; narrowed by type and
 * status, searched over the title and text fields. Each opens its page.
 */
function QueueList() {
  const session = useSession();
  const writable = can(session, "write");
  const [type, setType] = useState<ItemType | "">("");
  const [status, setStatus] = useState<ItemStatus | "">("");
  const [filing, setFiling] = useState(false);
  const [rejecting, setRejecting] = useState<QueueItem | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { data, error: loadError, reload } = useLiveList(() => loadItems({ ...(type ? { type } : {}), ...(status ? { status } : {}) }), [session.project.id, type, status]);
  const waiting = data?.filter((i) => i.status === "pending_approval").length ?? 0;

  const decide = async (item: QueueItem, verb: "approve" | "reject") => {
    setBusy(item.id);
    try {
      const api = opsApi.api.admin.ops({ id: item.id });
      await call(verb === "approve" ? api.approve.post() : api.reject.post());
      await reload();
      setError(null);
      setMessage(verb === "approve" ? `Approved ${itemName(item)}: it is open, and the project's connectors hear of it` : `Rejected ${itemName(item)}`);
    } catch (err) {
      setError(describeError(err));
      throw err;
    } finally {
      setBusy(null);
    }
  };

  return (
    <ResourceList
      title="Queue"
      noun="item"
      intro={
        <>
          Bug reports and feature requests from people and from your app's public intake (those wait for approval), and the items svc files for <Link href="/errors">errors</Link> and firing{" "}
          <Link href="/alerts">alerts</Link>.
        </>
      }
      searchLabel="Search the queue"
      filters={
        <>
          <select aria-label="Type" value={type} onChange={(e) => setType(e.currentTarget.value as ItemType | "")}>
            <option value="">Any type</option>
            {ITEM_TYPES.map((t) => (
              <option key={t} value={t}>
                {TYPE_LABELS[t]}
              </option>
            ))}
          </select>
          <select aria-label="Status" value={status} onChange={(e) => setStatus(e.currentTarget.value as ItemStatus | "")}>
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABELS[s]}
              </option>
            ))}
          </select>
        </>
      }
      afterSearch={waiting > 0 && <p>{waiting === 1 ? "1 item waits for approval." : `${waiting} items wait for approval.`}</p>}
      items={data}
      error={loadError ?? error}
      message={message}
      create={writable && { label: "New item", onClick: () => setFiling(true) }}
      searchText={(i) => [i.title, i.stepsToReproduce, i.actualResult, i.expectedResult, i.useCase]}
      empty={type || status ? "No items of this type and status." : "The queue is empty."}
      caption="Queue items, those waiting for approval first, then the newest"
      rowKey={(i) => i.id}
      nameHeader="Item"
      name={(i) => (
        <>
          <Link href={`/queue/${i.number}`}>{itemName(i)}</Link>
          {i.timesFiled > 1 && <div class="muted small">filed {i.timesFiled} times</div>}
        </>
      )}
      columns={[
        { header: "Type", cell: (i) => TYPE_LABELS[i.type] },
        { header: "Status", cell: (i) => <StatusBadge status={i.status} /> },
        { header: "Priority", cell: (i) => PRIORITY_LABELS[i.priority] },
        { header: "Filed", cell: (i) => <When iso={i.createdAt} /> },
      ]}
      actions={
        writable &&
        ((i) =>
          i.status === "pending_approval" && (
            <div class="row">
              <button type="button" class="small" aria-label={`Approve ${itemName(i)}`} disabled={busy === i.id} onClick={() => void decide(i, "approve").catch(() => undefined)}>
                Approve
              </button>
              <button type="button" class="danger secondary small" aria-label={`Reject ${itemName(i)}`} disabled={busy === i.id} onClick={() => setRejecting(i)}>
                Reject
              </button>
            </div>
          ))
      }
    >
      <ItemDialog
        open={filing}
        editing={null}
        onClose={() => setFiling(false)}
        onSaved={async (saved) => {
          setFiling(false);
          await reload();
          setMessage(`Filed #${saved.number}`);
        }}
      />
      <ConfirmDialog
        open={rejecting !== null}
        title={rejecting ? `Reject ${itemName(rejecting)}?` : ""}
        message={<p>Rejected is final: the item stays in the queue, closed. Its reporter is not told.</p>}
        confirmLabel="Reject item"
        danger
        onConfirm={() => decide(rejecting!, "reject")}
        onClose={() => setRejecting(null)}
      />
    </ResourceList>
  );
}

function QueueCard() {
  const session = useSession();
  const { data } = useLoad(() => loadItems({ status: "pending_approval" }), [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href="/queue">
        <strong>{data.length}</strong> {data.length === 1 ? "item waits" : "items wait"} for approval
      </Link>
    </>
  );
}

export const opsDashboard: DashboardModule = {
  pages: [
    { path: "/queue", title: "Queue", nav: { label: "Queue", order: 44, group: "work" }, empty: { about: "The queue holds bug reports, feature requests and tickets, from your team or the public intake, to triage and approve.", command: "svc ops create --type bug \"Checkout fails on Safari\" --priority high" }, view: QueueList },
    { path: "/queue/:number", title: (p) => `Item #${p.number}`, view: ({ params }) => <ItemDetail number={params.number!} /> },
  ],
  overview: QueueCard,
  palette: async () => (await loadItems()).map((i) => ({ label: itemName(i), kind: TYPE_LABELS[i.type].toLowerCase(), href: `/queue/${i.number}` })),
};
