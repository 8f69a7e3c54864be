import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Count, OverviewCard } from "../../../web/dashboard/overview-card";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { Link, RowEditDelete, When } from "../../../web/dashboard/ui";
import { type Metric, loadMetrics, metricSummary } from "./client";
import { MetricDetail } from "./detail";
import { DeleteMetricDialog, MetricDialog } from "./form";

/** The metrics of the project: what each measures; define, edit and delete; each opens its chart. */
function MetricList() {
  const session = useSession();
  const writable = can(session, "write");
  const { data, error, reload } = useLiveList(loadMetrics, [session.project.id]);
  const rows = useRowDialogs<Metric>(reload);
  return (
    <ResourceList
      title="Metrics"
      noun="metric"
      intro={
        <>
          Counts, sums, unique units and ratios over the <Link href="/events">events</Link> of the catalog. Alert rules watch them.
        </>
      }
      items={data}
      error={error}
      message={rows.message}
      create={writable && { label: "New metric", onClick: rows.create }}
      searchText={(m) => [m.name, m.description]}
      caption="Metrics with their kind, what they measure and when they changed"
      rowKey={(m) => m.id}
      name={(m) => <NameCell href={`/metrics/${encodeURIComponent(m.name)}`} name={m.name} description={m.description} />}
      columns={[
        { header: "Kind", cell: (m) => m.kind },
        { header: "Measures", cell: (m) => metricSummary(m), class: "small mono" },
        { header: "Updated", cell: (m) => <When iso={m.updatedAt} /> },
      ]}
      actions={writable && ((m) => <RowEditDelete noun="metric" name={m.name} onEdit={() => rows.edit(m)} onDelete={() => rows.remove(m)} />)}
    >
      <MetricDialog
        {...rows.dialog}
        onSaved={async (saved) => (rows.closeDialog() ? rows.done(`Saved metric ${saved.name}`) : navigate(`/metrics/${encodeURIComponent(saved.name)}`))}
      />
      <DeleteMetricDialog metric={rows.deleting} onClose={rows.closeDelete} onDeleted={(x) => rows.done(`Deleted metric ${x.name}`)} />
    </ResourceList>
  );
}

function MetricsCard() {
  return <OverviewCard load={loadMetrics} href="/metrics" main={(data) => <Count n={data.length} one="metric" many="metrics" />} more={(data) => `${data.filter((m) => m.kind === "ratio").length} of them ratios`} />;
}

export const metricsDashboard: DashboardModule = {
  pages: [
    { path: "/metrics", title: "Metrics", nav: { label: "Metrics", order: 51, group: "experiment" }, empty: { about: "Metrics turn events into numbers (counts, unique users, sums) that experiments, rollouts and alerts watch.", command: "svc metrics create checkouts --kind count --event checkout.completed" }, view: MetricList },
    { path: "/metrics/:name", title: (p) => `Metric ${p.name}`, view: ({ params }) => <MetricDetail name={params.name!} /> },
  ],
  overview: MetricsCard,
  palette: async () => (await loadMetrics()).map((m) => ({ label: m.name, kind: "metric", href: `/metrics/${encodeURIComponent(m.name)}` })),
};
