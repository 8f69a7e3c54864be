import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { FactsTable } from "../../../web/dashboard/data-table";
import { DetailFrame, notLoaded, useActions } from "../../../web/dashboard/detail-frame";
import { can, useSession } from "../../../web/dashboard/registry";
import { ConfirmDialog, Link, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { NEXT, PRIORITY_LABELS, STATUS_LABELS, StatusBadge, TYPE_LABELS, itemName, opsApi } from "./client";
import { ItemDialog } from "./form";

type Move = (typeof NEXT)[keyof typeof NEXT][number];

/** A text field as written: its lines kept, or a muted "none". */
function Text({ value }: { value: string | null }) {
  if (value === null) return <span class="muted">none</span>;
  return <div style={{ whiteSpace: "pre-wrap" }}>{value}</div>;
}

/** One item: its fields and text, its status with the moves it allows (approve, start, done, reopen, reject), and an edit dialog. */
export function ItemDetail({ number }: { number: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = opsApi.api.admin.ops({ id: number });
  const load = useLoad(() => call(api.get()), [session.project.id, number]);
  const { data: item, reload } = load;
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState<Move | null>(null);
  const actions = useActions<Move>(reload);
  useLiveReload(reload);

  if (!item) return notLoaded(load);

  const move = (next: Move) => actions.run(next, () => call(next.status === "open" && item.status === "pending_approval" ? api.approve.post() : api.patch({ status: next.status })), `${next.done} ${itemName(item)}`);

  return (
    <DetailFrame
      back={{ href: "/queue", label: "Queue" }}
      title={itemName(item)}
      writable={writable}
      actions={
        <>
          {NEXT[item.status].map((n) => (
            <button
              key={n.status}
              type="button"
              class={n.danger ? "danger secondary" : n.status === "open" && item.status === "pending_approval" ? undefined : "secondary"}
              disabled={actions.busy !== null}
              onClick={() => (n.danger ? setConfirming(n) : void move(n).catch(() => undefined))}
            >
              {n.label}
            </button>
          ))}
          <button type="button" class="secondary" onClick={() => setEditing(true)}>
            Edit item
          </button>
        </>
      }
      error={actions.error}
      message={actions.message}
    >
      <FactsTable
        caption="About this item"
        rows={[
          [
            "Status",
            <>
              <StatusBadge status={item.status} />{" "}
              <span class="muted small">
                set by {item.statusChangedBy} <When iso={item.statusChangedAt} />
              </span>
            </>,
          ],
          ["Type", TYPE_LABELS[item.type]],
          ["Priority", PRIORITY_LABELS[item.priority]],
          [
            "Filed",
            <>
              <When iso={item.createdAt} /> by {item.reportedBy} <span class="muted small">({item.source === "intake" ? "public intake" : item.source === "platform" ? "svc" : "a person"})</span>
              {item.timesFiled > 1 && <div class="muted small">filed {item.timesFiled} times: its {item.type === "alert" ? "alert fired" : "error regressed"} again</div>}
            </>,
          ],
          item.sourceRef && ["About", item.type === "error" ? <Link href={`/errors/${encodeURIComponent(item.sourceRef)}`}>{item.sourceRef}</Link> : <Link href="/alerts">{item.sourceRef}</Link>],
          ["Steps to reproduce", <Text value={item.stepsToReproduce} />],
          ["Actual result", <Text value={item.actualResult} />],
          ["Expected result", <Text value={item.expectedResult} />],
          ["Use case", <Text value={item.useCase} />],
        ]}
      />
      <ItemDialog
        open={editing}
        editing={item}
        onClose={() => setEditing(false)}
        onSaved={async () => {
          setEditing(false);
          await reload();
          actions.setMessage(`Saved #${item.number}`);
        }}
      />
      <ConfirmDialog
        open={confirming !== null}
        title={`Reject ${itemName(item)}?`}
        message={<p>Rejected is final: the item stays in the queue, closed, as {STATUS_LABELS.rejected}.</p>}
        confirmLabel="Reject item"
        danger
        onConfirm={() => move(confirming!)}
        onClose={() => setConfirming(null)}
      />
    </DetailFrame>
  );
}
