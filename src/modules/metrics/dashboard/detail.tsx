import { useState } from "preact/hooks";
import { ApiFailure, call } from "../../../web/dashboard/api";
import { SERIES_WINDOWS, type SeriesWindow, SeriesChart, WindowPicker, windowRange } from "../../../web/dashboard/chart";
import { can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { DetailFrame, notLoaded } from "../../../web/dashboard/detail-frame";
import { ErrorMessage, Link, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { metricApi, metricSummary } from "./client";
import { DeleteMetricDialog, MetricDialog } from "./form";

/** A series, or why the stored definition no longer compiles (422). */
type SeriesState = { window: SeriesWindow; rows: { t: number; v: number }[]; sql: string } | { window: SeriesWindow; broken: ApiFailure };

/** One metric: what it measures, its series over a window preset as a chart, the SQL that ran; edit and delete. */
export function MetricDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = metricApi.api.admin.metrics({ id: name });
  const [win, setWin] = useState<SeriesWindow>(SERIES_WINDOWS[0]);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const metric = useLoad(() => call(api.get()), [session.project.id, name]);
  const series = useLoad(async (): Promise<SeriesState> => {
    try {
      return { window: win, ...(await call(api.series.post(windowRange(win)))) };
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 422) return { window: win, broken: err };
      throw err;
    }
  }, [session.project.id, name, win.id]);
  useLiveReload(metric.reload);
  useLiveReload(series.reload, 15_000);

  const m = metric.data;
  if (!m) return notLoaded(metric);
  const s = series.data;
  const rows = s && "rows" in s && s.window.id === win.id ? s.rows : undefined;

  return (
    <DetailFrame
      back={{ href: "/metrics", label: "Metrics" }}
      title={m.name}
      description={m.description}
      meta={
        <>
          {m.kind}: <span class="mono">{metricSummary(m)}</span> · updated <When iso={m.updatedAt} />
        </>
      }
      writable={writable}
      actions={
        <button type="button" class="secondary" onClick={() => setEditing(true)}>
          Edit metric
        </button>
      }
      danger={{ noun: "metric", open: () => setDeleting(true) }}
      message={message}
    >
      <h2>Series</h2>
      <WindowPicker current={win} onSelect={setWin} />
      {s && "broken" in s ? (
        <div class="panel">
          <p role="alert">
            <strong>This metric no longer computes.</strong> {s.broken.message}
          </p>
          {s.broken.detail && <p class="mono small">{s.broken.detail}</p>}
          <p>
            Something it names has left the <Link href="/events">event catalog</Link>. Edit the metric to measure what the catalog has now, and save it.
          </p>
          {writable && (
            <button type="button" onClick={() => setEditing(true)}>
              Edit {m.name}
            </button>
          )}
        </div>
      ) : (
        <>
          <ErrorMessage error={series.error} />
          <SeriesChart rows={rows} bucket={win.bucket} title={`${m.name}, ${win.label}`} summable={m.kind === "count" || m.kind === "sum"} />
          {s && "sql" in s && (
            <details>
              <summary>SQL that ran</summary>
              {/* Focusable: a long statement scrolls, and keyboards must reach it. */}
              <pre class="value sql" tabIndex={0} aria-label="SQL that ran">
                {s.sql}
              </pre>
            </details>
          )}
        </>
      )}
      <MetricDialog
        open={editing}
        editing={m}
        onClose={() => setEditing(false)}
        onSaved={async (saved) => {
          setEditing(false);
          setMessage(`Saved metric ${saved.name}`);
          if (saved.name !== m.name) return navigate(`/metrics/${encodeURIComponent(saved.name)}`, { replace: true });
          await Promise.all([metric.reload(), series.reload()]);
        }}
      />
      <DeleteMetricDialog metric={deleting ? m : null} onClose={() => setDeleting(false)} onDeleted={() => navigate("/metrics")} />
    </DetailFrame>
  );
}
