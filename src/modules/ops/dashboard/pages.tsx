import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { listAndDetail, overviewCard, useActions } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { FilterSelect, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { ConfirmDialog, Link, When } from "../../../web/dashboard/ui";
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
  const { data, error: loadError, reload } = useLiveList(() => loadItems({ ...(type ? { type } : {}), ...(status ? { status } : {}) }), [session.project.id, type, status]);
  const waiting = data?.filter((i) => i.status === "pending_approval").length ?? 0;

  const actions = useActions<string>(reload);
  const decide = (item: QueueItem, verb: "approve" | "reject") => {
    const api = opsApi.api.admin.ops({ id: item.id });
    return actions.run(
      item.id,
      () => call(verb === "approve" ? api.approve.post() : api.reject.post()),
      verb === "approve" ? `Approved ${itemName(item)}: it is open, and the project's connectors hear of it` : `Rejected ${itemName(item)}`,
    );
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
          <FilterSelect bare label="Type" any="Any type" value={type} onChange={(t) => setType(t as ItemType | "")} options={ITEM_TYPES.map((t) => ({ value: t, text: TYPE_LABELS[t] }))} />
          <FilterSelect bare label="Status" any="Any status" value={status} onChange={(s) => setStatus(s as ItemStatus | "")} options={STATUSES.map((s) => ({ value: s, text: STATUS_LABELS[s] }))} />
        </>
      }
      afterSearch={waiting > 0 && <p>{waiting === 1 ? "1 item waits for approval." : `${waiting} items wait for approval.`}</p>}
      items={data}
      error={loadError ?? actions.error}
      message={actions.message}
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
              <button type="button" class="small" aria-label={`Approve ${itemName(i)}`} disabled={actions.busy === i.id} onClick={() => void decide(i, "approve").catch(() => undefined)}>
                Approve
              </button>
              <button type="button" class="danger secondary small" aria-label={`Reject ${itemName(i)}`} disabled={actions.busy === i.id} onClick={() => setRejecting(i)}>
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
          actions.setMessage(`Filed #${saved.number}`);
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

export const opsDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/queue", title: "Queue", order: 44, group: "work", empty: { about: "The queue holds bug reports, feature requests and tickets, from your team or the public intake, to triage and approve.", command: "svc ops create --type bug \"Checkout fails on Safari\" --priority high" }, list: QueueList, param: "number", one: (n) => `Item #${n}`, detail: (n) => <ItemDetail number={n} /> }),
  overview: overviewCard(
    () => loadItems({ status: "pending_approval" }),
    (waiting) => ({ href: "/queue", count: waiting.length, label: `${waiting.length === 1 ? "item waits" : "items wait"} for approval` }),
  ),
  palette: async () => (await loadItems()).map((i) => ({ label: itemName(i), kind: TYPE_LABELS[i.type].toLowerCase(), href: `/queue/${i.number}` })),
};
