import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { can, useSession } from "../../../web/dashboard/registry";
import { ConfirmDialog, ErrorMessage, Link, Loading, Status, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
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
  const { data: item, error: loadError, reload } = useLoad(() => call(api.get()), [session.project.id, number]);
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState<Move | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useLiveReload(reload);

  if (loadError && !item) return <ErrorMessage error={loadError} />;
  if (!item) return <Loading />;

  const move = async (next: Move) => {
    setBusy(true);
    try {
      await call(next.status === "open" && item.status === "pending_approval" ? api.approve.post() : api.patch({ status: next.status }));
      await reload();
      setError(null);
      setMessage(`${next.done} ${itemName(item)}`);
    } catch (err) {
      setError(describeError(err));
      throw err;
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p class="crumbs">
        <Link href="/queue">Queue</Link> /
      </p>
      <div class="page-head">
        <h1>{itemName(item)}</h1>
        {writable && (
          <div class="row">
            {NEXT[item.status].map((n) => (
              <button
                key={n.status}
                type="button"
                class={n.danger ? "danger secondary" : n.status === "open" && item.status === "pending_approval" ? undefined : "secondary"}
                disabled={busy}
                onClick={() => (n.danger ? setConfirming(n) : void move(n).catch(() => undefined))}
              >
                {n.label}
              </button>
            ))}
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit item
            </button>
          </div>
        )}
      </div>
      <ErrorMessage error={error} />
      <Status message={message} />
      <table>
        <caption class="visually-hidden">About this item</caption>
        <tbody>
          <tr>
            <th scope="row">Status</th>
            <td>
              <StatusBadge status={item.status} />{" "}
              <span class="muted small">
                set by {item.statusChangedBy} <When iso={item.statusChangedAt} />
              </span>
            </td>
          </tr>
          <tr>
            <th scope="row">Type</th>
            <td>{TYPE_LABELS[item.type]}</td>
          </tr>
          <tr>
            <th scope="row">Priority</th>
            <td>{PRIORITY_LABELS[item.priority]}</td>
          </tr>
          <tr>
            <th scope="row">Filed</th>
            <td>
              <When iso={item.createdAt} /> by {item.reportedBy}{" "}
              <span class="muted small">({item.source === "intake" ? "public intake" : item.source === "platform" ? "svc" : "a person"})</span>
              {item.timesFiled > 1 && <div class="muted small">filed {item.timesFiled} times: its {item.type === "alert" ? "alert fired" : "error regressed"} again</div>}
            </td>
          </tr>
          {item.sourceRef && (
            <tr>
              <th scope="row">About</th>
              <td>{item.type === "error" ? <Link href={`/errors/${encodeURIComponent(item.sourceRef)}`}>{item.sourceRef}</Link> : <Link href="/alerts">{item.sourceRef}</Link>}</td>
            </tr>
          )}
          <tr>
            <th scope="row">Steps to reproduce</th>
            <td>
              <Text value={item.stepsToReproduce} />
            </td>
          </tr>
          <tr>
            <th scope="row">Actual result</th>
            <td>
              <Text value={item.actualResult} />
            </td>
          </tr>
          <tr>
            <th scope="row">Expected result</th>
            <td>
              <Text value={item.expectedResult} />
            </td>
          </tr>
          <tr>
            <th scope="row">Use case</th>
            <td>
              <Text value={item.useCase} />
            </td>
          </tr>
        </tbody>
      </table>
      <ItemDialog
        open={editing}
        editing={item}
        onClose={() => setEditing(false)}
        onSaved={async () => {
          setEditing(false);
          await reload();
          setMessage(`Saved #${item.number}`);
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
    </>
  );
}
