import { useState } from "preact/hooks";
import { countOf, listAndDetail, overviewCard } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { FilterSelect, NameCell, ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { Link, RowEditDelete, When, useLoad } from "../../../web/dashboard/ui";
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
  // The server filters (q over name and description, status).
  const { data, error, reload } = useLiveList(() => loadExperiments({ ...(q.trim() ? { q: q.trim() } : {}), ...(status ? { status } : {}) }), [session.project.id, q, status]);
  const rows = useRowDialogs<Experiment>(reload);
  const metrics = useLoad(loadMetrics, [session.project.id]);
  const metricName = (id: string | null) => (id ? (metrics.data?.find((m) => m.id === id)?.name ?? id) : null);
  const filtered = q.trim() !== "" || status !== "";
  return (
    <ResourceList
      title="Experiments"
      noun="experiment"
      intro={
        <>
          Variants split over a range of a <Link href="/universes">universe</Link>'s segments, measured by <Link href="/metrics">metrics</Link>: draft, running (in its env's snapshot),
          stopped (a variant shipped, or rolled back).
        </>
      }
      search={{ value: q, onInput: setQ }}
      filtersClass="row filters"
      filters={<FilterSelect label="Status" value={status} onChange={setStatus} options={STATUSES.map((s) => ({ value: s, text: s }))} />}
      items={data}
      error={error}
      message={rows.message}
      create={writable && { label: "New experiment", onClick: rows.create }}
      empty={filtered ? "No experiment matches these filters." : "No experiments yet."}
      caption="Experiments with their universe, state, allocation, primary metric and start"
      rowKey={(e) => e.id}
      name={(e) => <NameCell href={href(e)} name={e.name} description={e.description} />}
      columns={[
        { header: "Universe", cell: (e) => e.universe },
        { header: "Status", cell: (e) => <StatusBadge e={e} /> },
        {
          header: "Allocation",
          cell: (e) => (
            <>
              {allocationShare(e.allocation)} % of units
              <div class="muted small nowrap">{allocationText(e.allocation).replace(/ \(.*\)$/, "")}</div>
            </>
          ),
        },
        { header: "Primary metric", cell: (e) => metricName(e.primaryMetric) ?? <span class="muted">none</span> },
        { header: "Started", cell: (e) => <When iso={e.startedAt} /> },
      ]}
      actions={writable && ((e) => <RowEditDelete noun="experiment" name={e.name} onEdit={() => rows.edit(e)} onDelete={() => rows.remove(e)} />)}
    >
      <ExperimentDialog
        {...rows.dialog}
        onSaved={async (saved) => (rows.closeDialog() ? rows.done(`Saved experiment ${saved.name}`) : navigate(href(saved)))}
      />
      <DeleteExperimentDialog experiment={rows.deleting} onClose={rows.closeDelete} onDeleted={(x) => rows.done(`Deleted experiment ${x.name}`)} />
    </ResourceList>
  );
}

export const experimentsDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/experiments", title: "Experiments", order: 50, group: "experiment", empty: { about: "Experiments show variants to part of a universe and measure which one does better on your metrics.", command: "svc experiments create checkout-button --universe web-users --variant control=50 --variant green=50 --allocation 0-5000" }, list: ExperimentList, param: "name", one: (name) => `Experiment ${name}`, detail: (name) => <ExperimentDetail name={name} /> }),
  overview: overviewCard(loadExperiments, (list) => {
    const running = list.filter((e) => e.status === "running").length;
    return { href: "/experiments", count: running, label: `${running === 1 ? "experiment" : "experiments"} running`, more: countOf(list.length, "experiment") };
  }),
  palette: async () => (await loadExperiments()).map((e) => ({ label: e.name, kind: "experiment", href: href(e) })),
};
