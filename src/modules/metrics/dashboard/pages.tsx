import { useState } from "preact/hooks";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ErrorMessage, Link, Loading, RowEditDelete, SearchBox, Status, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { type Metric, loadMetrics, metricSummary } from "./client";
import { MetricDetail } from "./detail";
import { DeleteMetricDialog, MetricDialog } from "./form";

/** The metrics of the project: what each measures; define, edit and delete; each opens its chart. */
function MetricList() {
  const session = useSession();
  const writable = can(session, "write");
  const [q, setQ] = useState("");
  const [dialog, setDialog] = useState<{ editing: Metric | null } | null>(null);
  const [deleting, setDeleting] = useState<Metric | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const { data, error, reload } = useLoad(loadMetrics, [session.project.id]);
  useLiveReload(reload);
  const needle = q.toLowerCase();
  const shown = data?.filter((m) => !q || m.name.toLowerCase().includes(needle) || (m.description ?? "").toLowerCase().includes(needle));
  return (
    <>
      <div class="page-head">
        <h1>Metrics</h1>
        {writable && (
          <button type="button" onClick={() => setDialog({ editing: null })}>
            New metric
          </button>
        )}
      </div>
      <p class="muted">
        Counts, sums, unique units and ratios over the <Link href="/events">events</Link> of the catalog. Alert rules watch them.
      </p>
      <SearchBox label="Search metrics" value={q} onInput={setQ} />
      <ErrorMessage error={error} />
      <Status message={message} />
      {!data ? (
        !error && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? "No metrics yet." : `No metric matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Metrics with their kind, what they measure and when they changed</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Measures</th>
              <th scope="col">Updated</th>
              {writable && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {shown!.map((m) => (
              <tr key={m.id}>
                <th scope="row">
                  <Link href={`/metrics/${encodeURIComponent(m.name)}`}>{m.name}</Link>
                  {m.description && <div class="muted small">{m.description}</div>}
                </th>
                <td>{m.kind}</td>
                <td class="small mono">{metricSummary(m)}</td>
                <td>
                  <When iso={m.updatedAt} />
                </td>
                {writable && (
                  <td>
                    <RowEditDelete noun="metric" name={m.name} onEdit={() => setDialog({ editing: m })} onDelete={() => setDeleting(m)} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <MetricDialog
        open={dialog !== null}
        editing={dialog?.editing ?? null}
        onClose={() => setDialog(null)}
        onSaved={async (saved) => {
          const editing = dialog?.editing;
          setDialog(null);
          if (!editing) return navigate(`/metrics/${encodeURIComponent(saved.name)}`);
          await reload();
          setMessage(`Saved metric ${saved.name}`);
        }}
      />
      <DeleteMetricDialog
        metric={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={async (m) => {
          await reload();
          setMessage(`Deleted metric ${m.name}`);
        }}
      />
    </>
  );
}

function MetricsCard() {
  const session = useSession();
  const { data } = useLoad(loadMetrics, [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href="/metrics">
        <strong>{data.length}</strong> {data.length === 1 ? "metric" : "metrics"}
      </Link>
      <span class="muted"> · {data.filter((m) => m.kind === "ratio").length} of them ratios</span>
    </>
  );
}

export const metricsDashboard: DashboardModule = {
  pages: [
    { path: "/metrics", title: "Metrics", nav: { label: "Metrics", order: 42 }, view: MetricList },
    { path: "/metrics/:name", title: (p) => `Metric ${p.name}`, view: ({ params }) => <MetricDetail name={params.name!} /> },
  ],
  overview: MetricsCard,
  palette: async () => (await loadMetrics()).map((m) => ({ label: m.name, kind: "metric", href: `/metrics/${encodeURIComponent(m.name)}` })),
};
