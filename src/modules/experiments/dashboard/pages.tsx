import { useState } from "preact/hooks";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ErrorMessage, Link, Loading, RowEditDelete, SearchBox, Status, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { loadMetrics } from "../../metrics/dashboard/client";
import { STATUSES, type Experiment, allocationShare, allocationText, loadExperiments } from "./client";
import { ExperimentDetail } from "./detail";
import { DeleteExperimentDialog, ExperimentDialog } from "./form";
import { StatusBadge } from "./status";

const href = (e: { name: string }) => `/experiments/${encodeURIComponent(e.name)}`;

/** The experiments of the project: universe, state, allocation, primary metric, start; filter by text and state; create, edit, delete. */
function ExperimentList() {
  const session = useSession();
  const writable = can(session, "write");
  const [q, setQ] = useState("");
  const [status, setStatus] = useState("");
  const [dialog, setDialog] = useState<{ editing: Experiment | null } | null>(null);
  const [deleting, setDeleting] = useState<Experiment | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // The server filters (q over name and description, status).
  const { data, error, reload } = useLoad(() => loadExperiments({ ...(q.trim() ? { q: q.trim() } : {}), ...(status ? { status } : {}) }), [session.project.id, q, status]);
  const metrics = useLoad(loadMetrics, [session.project.id]);
  useLiveReload(reload);
  const metricName = (id: string | null) => (id ? (metrics.data?.find((m) => m.id === id)?.name ?? id) : null);
  const filtered = q.trim() !== "" || status !== "";
  return (
    <>
      <div class="page-head">
        <h1>Experiments</h1>
        {writable && (
          <button type="button" onClick={() => setDialog({ editing: null })}>
            New experiment
          </button>
        )}
      </div>
      <p class="muted">
        Variants split over a range of a <Link href="/universes">universe</Link>'s segments, measured by <Link href="/metrics">metrics</Link>: draft, running (in its env's snapshot),
        stopped (a variant shipped, or rolled back).
      </p>
      <div class="row filters">
        <SearchBox label="Search experiments" value={q} onInput={setQ} />
        <label>
          Status{" "}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={error} />
      <Status message={message} />
      {!data ? (
        !error && <Loading />
      ) : data.length === 0 ? (
        <p class="muted">{filtered ? "No experiment matches these filters." : "No experiments yet."}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Experiments with their universe, state, allocation, primary metric and start</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Universe</th>
              <th scope="col">Status</th>
              <th scope="col">Allocation</th>
              <th scope="col">Primary metric</th>
              <th scope="col">Started</th>
              {writable && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {data.map((e) => (
              <tr key={e.id}>
                <th scope="row">
                  <Link href={href(e)}>{e.name}</Link>
                  {e.description && <div class="muted small">{e.description}</div>}
                </th>
                <td>{e.universe}</td>
                <td>
                  <StatusBadge e={e} />
                </td>
                <td>
                  {allocationShare(e.allocation)} % of units
                  <div class="muted small nowrap">{allocationText(e.allocation).replace(/ \(.*\)$/, "")}</div>
                </td>
                <td>{metricName(e.primaryMetric) ?? <span class="muted">none</span>}</td>
                <td>
                  <When iso={e.startedAt} />
                </td>
                {writable && (
                  <td>
                    <RowEditDelete noun="experiment" name={e.name} onEdit={() => setDialog({ editing: e })} onDelete={() => setDeleting(e)} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ExperimentDialog
        open={dialog !== null}
        editing={dialog?.editing ?? null}
        onClose={() => setDialog(null)}
        onSaved={async (saved) => {
          const editing = dialog?.editing;
          setDialog(null);
          if (!editing) return navigate(href(saved));
          await reload();
          setMessage(`Saved experiment ${saved.name}`);
        }}
      />
      <DeleteExperimentDialog
        experiment={deleting}
        onClose={() => setDeleting(null)}
        onDeleted={async (e) => {
          await reload();
          setMessage(`Deleted experiment ${e.name}`);
        }}
      />
    </>
  );
}

function ExperimentsCard() {
  const session = useSession();
  const { data } = useLoad(() => loadExperiments(), [session.project.id]);
  if (!data) return <Loading />;
  const running = data.filter((e) => e.status === "running").length;
  return (
    <>
      <Link href="/experiments">
        <strong>{running}</strong> {running === 1 ? "experiment" : "experiments"} running
      </Link>
      <span class="muted"> · {data.length === 1 ? "1 experiment" : `${data.length} experiments`}</span>
    </>
  );
}

export const experimentsDashboard: DashboardModule = {
  pages: [
    { path: "/experiments", title: "Experiments", nav: { label: "Experiments", order: 50 }, view: ExperimentList },
    { path: "/experiments/:name", title: (p) => `Experiment ${p.name}`, view: ({ params }) => <ExperimentDetail name={params.name!} /> },
  ],
  overview: ExperimentsCard,
  palette: async () => (await loadExperiments()).map((e) => ({ label: e.name, kind: "experiment", href: href(e) })),
};
