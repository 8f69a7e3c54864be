import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { SERIES_WINDOWS, type SeriesWindow, SeriesChart, WindowPicker, windowRange } from "../../../web/dashboard/chart";
import { FactsTable } from "../../../web/dashboard/data-table";
import { DetailFrame, notLoaded, useActions } from "../../../web/dashboard/detail-frame";
import { can, useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { type ErrorStatus, StatusBadge, errorApi } from "./client";
import { Occurrences } from "./occurrence";

const count = new Intl.NumberFormat();

/** What a person may set from each status (regressed is svc's: it reads as unresolved). */
const RESOLVE = { status: "resolved", label: "Resolve", done: "Resolved" } as const;
const IGNORE = { status: "ignored", label: "Ignore", done: "Ignored" } as const;
const REOPEN = { status: "unresolved", label: "Reopen", done: "Reopened" } as const;
const NEXT: Record<ErrorStatus, readonly { status: "unresolved" | "resolved" | "ignored"; label: string; done: string }[]> = {
  unresolved: [RESOLVE, IGNORE],
  regressed: [RESOLVE, IGNORE],
  resolved: [REOPEN, IGNORE],
  ignored: [REOPEN, RESOLVE],
};

/** A time, relative and in full. */
function Seen({ iso }: { iso: string }) {
  return (
    <>
      <When iso={iso} /> <span class="muted small">({new Date(iso).toLocaleString()})</span>
    </>
  );
}

/** One tracked error: when it was first and last seen, where, how often and to whom; its status; where its latest occurrence broke; its occurrences over a window. */
export function ErrorDetail({ id }: { id: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = errorApi.api.admin.errors({ id });
  const [win, setWin] = useState<SeriesWindow>(SERIES_WINDOWS[0]);
  const tracked = useLoad(() => call(api.get()), [session.project.id, id]);
  const series = useLoad(async () => ({ window: win, ...(await call(api.series.post(windowRange(win)))) }), [session.project.id, id, win.id]);
  const actions = useActions<ErrorStatus>(tracked.reload);
  useLiveReload(tracked.reload);
  useLiveReload(series.reload, 15_000);

  const e = tracked.data;
  if (!e) return notLoaded(tracked);
  const rows = series.data?.window.id === win.id ? series.data.rows : undefined;

  const setStatus = (next: (typeof NEXT)[ErrorStatus][number]) =>
    actions
      .run(
        next.status,
        () => call(api.patch({ status: next.status })),
        `${next.done} ${e.type}: new occurrences ${next.status === "resolved" ? "mark it regressed" : next.status === "ignored" ? "keep it ignored" : "keep it open"}`,
      )
      .catch(() => undefined);

  return (
    <DetailFrame
      back={{ href: "/errors", label: "Errors" }}
      title={<span class="mono">{e.type}</span>}
      description={e.message}
      writable={writable}
      actions={NEXT[e.status].map((n) => (
        <button key={n.status} type="button" class={n.status === "resolved" ? undefined : "secondary"} disabled={actions.busy !== null} onClick={() => setStatus(n)}>
          {n.label} error
        </button>
      ))}
      error={actions.error}
      message={actions.message}
    >
      <FactsTable
        caption="About this error"
        rows={[
          [
            "Status",
            <>
              <StatusBadge status={e.status} />
              {e.statusChangedBy && (
                <span class="muted small">
                  {" "}
                  set by {e.statusChangedBy} <When iso={e.statusChangedAt} />
                </span>
              )}
            </>,
          ],
          ["Culprit", e.culprit ?? <span class="muted">no in-app frame</span>, "mono"],
          ["First seen", <Seen iso={e.firstSeenAt} />],
          ["Last seen", <Seen iso={e.lastSeenAt} />],
          ["Occurrences", count.format(e.count)],
          ["Affected units", count.format(e.affectedUnits)],
          ["Fingerprint", e.fingerprint, "mono small"],
        ]}
      />
      <Occurrences occurrences={e.occurrences} type={e.type} />
      <h2>Occurrences</h2>
      <WindowPicker current={win} onSelect={setWin} />
      <ErrorMessage error={series.error} />
      <SeriesChart rows={rows} bucket={win.bucket} title={`Occurrences of ${e.type}, ${win.label}`} />
    </DetailFrame>
  );
}
