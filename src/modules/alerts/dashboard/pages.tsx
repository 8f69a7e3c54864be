import { call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Count, OverviewCard } from "../../../web/dashboard/overview-card";
import { ResourceList, useLiveList, useRowDialogs } from "../../../web/dashboard/resource-list";
import { Badge, ConfirmDialog, Link, RowEditDelete, Switch, When, useLoad } from "../../../web/dashboard/ui";
import { loadMetrics } from "../../metrics/dashboard/client";
import { type AlertRule, alertApi, conditionText, formatValue, loadRules } from "./client";
import { AlertRuleDialog } from "./form";

/**
 * Alert rules: each watches a metric over a trailing window against a
 * threshold, and is ok or firing. Create, edit (never the metric), enable or
 * disable, delete (here only: keys and tokens cannot).
 */
function AlertRuleList() {
  const session = useSession();
  const writable = can(session, "write");
  const { data, error: loadError, reload } = useLiveList(loadRules, [session.project.id]);
  const rows = useRowDialogs<AlertRule>(reload);
  const metrics = useLoad(loadMetrics, [session.project.id]);
  const metricName = (id: string) => metrics.data?.find((m) => m.id === id)?.name;
  const firing = data?.filter((r) => r.enabled && r.state === "firing").length ?? 0;

  const setEnabled = async (r: AlertRule, enabled: boolean) => {
    try {
      await call(alertApi.api.admin["alert-rules"]({ id: r.id }).patch({ enabled }));
      await rows.done(enabled ? `Enabled ${r.name}: it is checked every minute` : `Disabled ${r.name}: it is no longer checked, and reads ok`);
    } catch (err) {
      rows.setError(describeError(err));
    }
  };

  return (
    <ResourceList
      title="Alert rules"
      noun="alert rule"
      intro={
        <>
          Each watches a <Link href="/metrics">metric</Link> over a trailing window and fires when it crosses the threshold; checked every minute.
        </>
      }
      afterSearch={
        firing > 0 && (
          <p>
            <Badge tone="danger" strong>
              {firing === 1 ? "1 rule firing" : `${firing} rules firing`}
            </Badge>
          </p>
        )
      }
      items={data}
      error={loadError ?? rows.error ?? metrics.error}
      message={rows.message}
      create={writable && { label: "New alert rule", onClick: rows.create }}
      searchText={(r) => [r.name, metricName(r.metricId)]}
      caption="Alert rules with their condition, state, last value and whether enabled"
      rowKey={(r) => r.id}
      name={(r) => (
        <>
          {r.name}
          {r.notify?.webhookUrl && <div class="muted small mono">→ {r.notify.webhookUrl}</div>}
        </>
      )}
      columns={[
        {
          header: "Fires when",
          cell: (r) => {
            const metric = metricName(r.metricId);
            return metric ? <Link href={`/metrics/${encodeURIComponent(metric)}`}>{conditionText(r, metric)}</Link> : conditionText(r);
          },
        },
        {
          header: "State",
          cell: (r) => (
            <>
              {!r.enabled ? <Badge>disabled</Badge> : r.state === "firing" ? <Badge tone="danger" strong>firing</Badge> : <Badge tone="ok">ok</Badge>}
              {r.lastTransitionAt && (
                <div class="muted small">
                  since <When iso={r.lastTransitionAt} />
                </div>
              )}
            </>
          ),
        },
        {
          header: "Last value",
          cell: (r) => (
            <>
              {formatValue(r.lastValue)}
              {r.lastCheckedAt && (
                <div class="muted small">
                  checked <When iso={r.lastCheckedAt} />
                </div>
              )}
            </>
          ),
        },
        { header: "Enabled", cell: (r) => <Switch checked={r.enabled} label={`Alert rule ${r.name} enabled`} disabled={!writable} onChange={(next) => void setEnabled(r, next)} /> },
      ]}
      actions={writable && ((r) => <RowEditDelete noun="alert rule" name={r.name} onEdit={() => rows.edit(r)} onDelete={() => rows.remove(r)} />)}
    >
      <AlertRuleDialog
        {...rows.dialog}
        metrics={metrics.data}
        onSaved={(name) => rows.done(`${rows.closeDialog() ? "Saved" : "Created"} alert rule ${name}`)}
      />
      <ConfirmDialog
        open={rows.deleting !== null}
        title={`Delete ${rows.deleting?.name ?? ""}?`}
        message={<p>It stops being checked and its history goes. To pause it instead, turn it off.</p>}
        confirmLabel="Delete alert rule"
        danger
        onConfirm={async () => {
          const gone = rows.deleting!;
          await call(alertApi.api.admin["alert-rules"]({ id: gone.id }).delete());
          await rows.done(`Deleted alert rule ${gone.name}`);
        }}
        onClose={rows.closeDelete}
      />
    </ResourceList>
  );
}

function AlertsCard() {
  const firing = (data: AlertRule[]) => data.filter((r) => r.enabled && r.state === "firing").length;
  return (
    <OverviewCard
      load={loadRules}
      href="/alerts"
      main={(data) => (
        <>
          <Count n={firing(data)} one="alert rule" many="alert rules" /> firing
        </>
      )}
      more={(data) => (data.length === 1 ? "1 rule" : `${data.length} rules`)}
    />
  );
}

export const alertsDashboard: DashboardModule = {
  pages: [{ path: "/alerts", title: "Alert rules", nav: { label: "Alert rules", order: 47, group: "observe" }, empty: { about: "Alert rules watch a metric and tell your connectors (Slack, a webhook…) when it crosses a threshold.", command: "svc alerts create orders-low --metric orders --comparator lt --threshold 10 --window 24h" }, view: AlertRuleList }],
  overview: AlertsCard,
};
