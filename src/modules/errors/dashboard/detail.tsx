import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { SERIES_WINDOWS, type SeriesWindow, SeriesChart, WindowPicker, windowRange } from "../../../web/dashboard/chart";
import { can, useSession } from "../../../web/dashboard/registry";
import { ErrorMessage, Link, Loading, Status, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { type ErrorStatus, StatusBadge, errorApi } from "./client";
import { Occurrences } from "./occurrence";

const count = new Intl.NumberFormat();

/** What a person may set from each status (regressed is svc's: it reads as unresolved). */
const NEXT: Record<ErrorStatus, { status: "unresolved" | "resolved" | "ignored"; label: string; done: string }[]> = {
  unresolved: [
    { status: "resolved", label: "Resolve", done: "Resolved" },
    { status: "ignored", label: "Ignore", done: "Ignored" },
  ],
  regressed: [
    { status: "resolved", label: "Resolve", done: "Resolved" },
    { status: "ignored", label: "Ignore", done: "Ignored" },
  ],
  resolved: [
    { status: "unresolved", label: "Reopen", done: "Reopened" },
    { status: "ignored", label: "Ignore", done: "Ignored" },
  ],
  ignored: [
    { status: "unresolved", label: "Reopen", done: "Reopened" },
    { status: "resolved", label: "Resolve", done: "Resolved" },
  ],
};

/** One tracked error: when it was first and last seen, where, how often and to whom; its status; where its latest occurrence broke; its occurrences over a window. */
export function ErrorDetail({ id }: { id: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = errorApi.api.admin.errors({ id });
  const [win, setWin] = useState<SeriesWindow>(SERIES_WINDOWS[0]);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const tracked = useLoad(() => call(api.get()), [session.project.id, id]);
  const series = useLoad(async () => ({ window: win, ...(await call(api.series.post(windowRange(win)))) }), [session.project.id, id, win.id]);
  useLiveReload(tracked.reload);
  useLiveReload(series.reload, 15_000);

  const e = tracked.data;
  if (tracked.error && !e) return <ErrorMessage error={tracked.error} />;
  if (!e) return <Loading />;
  const rows = series.data?.window.id === win.id ? series.data.rows : undefined;

  const setStatus = async (next: (typeof NEXT)[ErrorStatus][number]) => {
    setBusy(true);
    try {
      await call(api.patch({ status: next.status }));
      await tracked.reload();
      setError(null);
      setMessage(`${next.done} ${e.type}: new occurrences ${next.status === "resolved" ? "mark it regressed" : next.status === "ignored" ? "keep it ignored" : "keep it open"}`);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p class="crumbs">
        <Link href="/errors">Errors</Link> /
      </p>
      <div class="page-head">
        <h1>
          <span class="mono">{e.type}</span>
        </h1>
        {writable && (
          <div class="row">
            {NEXT[e.status].map((n) => (
              <button key={n.status} type="button" class={n.status === "resolved" ? undefined : "secondary"} disabled={busy} onClick={() => setStatus(n)}>
                {n.label} error
              </button>
            ))}
          </div>
        )}
      </div>
      <p>{e.message}</p>
      <ErrorMessage error={error} />
      <Status message={message} />
      <table>
        <caption class="visually-hidden">About this error</caption>
        <tbody>
          <tr>
            <th scope="row">Status</th>
            <td>
              <StatusBadge status={e.status} />
              {e.statusChangedBy && (
                <span class="muted small">
                  {" "}
                  set by {e.statusChangedBy} <When iso={e.statusChangedAt} />
                </span>
              )}
            </td>
          </tr>
          <tr>
            <th scope="row">Culprit</th>
            <td class="mono">{e.culprit ?? <span class="muted">no in-app frame</span>}</td>
          </tr>
          <tr>
            <th scope="row">First seen</th>
            <td>
              <When iso={e.firstSeenAt} /> <span class="muted small">({new Date(e.firstSeenAt).toLocaleString()})</span>
            </td>
          </tr>
          <tr>
            <th scope="row">Last seen</th>
            <td>
              <When iso={e.lastSeenAt} /> <span class="muted small">({new Date(e.lastSeenAt).toLocaleString()})</span>
            </td>
          </tr>
          <tr>
            <th scope="row">Occurrences</th>
            <td>{count.format(e.count)}</td>
          </tr>
          <tr>
            <th scope="row">Affected units</th>
            <td>{count.format(e.affectedUnits)}</td>
          </tr>
          <tr>
            <th scope="row">Fingerprint</th>
            <td class="mono small">{e.fingerprint}</td>
          </tr>
        </tbody>
      </table>
      <Occurrences occurrences={e.occurrences} type={e.type} />
      <h2>Occurrences</h2>
      <WindowPicker current={win} onSelect={setWin} />
      <ErrorMessage error={series.error} />
      <SeriesChart rows={rows} bucket={win.bucket} title={`Occurrences of ${e.type}, ${win.label}`} />
    </>
  );
}
