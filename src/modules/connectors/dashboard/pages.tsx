import { useEffect, useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { Count, OverviewCard } from "../../../web/dashboard/overview-card";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { TableHead } from "../../../web/dashboard/form-kit";
import { Badge, ErrorMessage, Link, Loading, Status, Switch, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { type Connector, type Delivery, connectorApi, loadConnectors, providerLabel, targetOf } from "./client";
import { ConnectorDialog, DeleteConnectorDialog } from "./form";

function StateBadge({ c }: { c: Connector }) {
  if (c.kind === "oauth" && !c.hasCredentials) return <Badge tone="accent">not connected</Badge>;
  return c.enabled ? <Badge tone="ok">enabled</Badge> : <Badge>disabled</Badge>;
}

function DeliveryBadge({ d }: { d: Delivery }) {
  if (d.status === "delivered") return <Badge tone="ok">delivered</Badge>;
  if (d.status === "failed") return <Badge tone="danger" strong>failed</Badge>;
  return <Badge tone="accent">pending</Badge>;
}

/** Turns a connector on or off from a list or its page (an OAuth one must be connected first: the server says so). */
function useEnable(onDone: (c: Connector, message: string) => Promise<void>) {
  const [error, setError] = useState<string | null>(null);
  const setEnabled = async (c: Connector, enabled: boolean) => {
    try {
      const api = connectorApi.api.admin.connectors({ id: c.id });
      const next = await call(enabled ? api.enable.post() : api.disable.post());
      setError(null);
      await onDone(next, `${enabled ? "Enabled" : "Disabled"} connector ${next.name}`);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return { error, setEnabled };
}

/** Starts the provider's OAuth flow: the browser goes to the vendor and comes back to this connector's page. */
async function connect(c: Connector): Promise<void> {
  const { url } = await call(connectorApi.api.admin.connectors({ id: c.id }).oauth.start.post({ returnTo: `/connectors/${c.id}` }));
  location.assign(url);
}

/** The project's connectors: provider, state, events, target; create, enable or disable, open one. */
function ConnectorList() {
  const session = useSession();
  // Connector writes are the admin role's (owner), not every editor's: an editor sees the list read-only.
  const writable = can(session, "manage");
  const [creating, setCreating] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const { data, error, reload } = useLiveList(loadConnectors, [session.project.id]);
  const toggle = useEnable(async (_c, m) => {
    await reload();
    setMessage(m);
  });
  return (
    <ResourceList
      title="Connectors"
      noun="connector"
      intro={
        <>
          Where the project's events go: issues in Linear, messages in Slack, rows in Google Sheets, agent runs (Claude, Cursor, Jules, GitHub Actions) and signed webhooks. Every event is
          written with the change that caused it and delivered with retries; each connector keeps a delivery log.
        </>
      }
      items={data}
      error={error ?? toggle.error}
      message={message}
      create={writable && { label: "New connector", onClick: () => setCreating(true) }}
      searchText={(c) => [c.name, c.provider]}
      caption="Connectors with their provider, state, events and target"
      rowKey={(c) => c.id}
      name={(c) => <NameCell href={`/connectors/${c.id}`} name={c.name} />}
      columns={[
        { header: "Provider", cell: (c) => providerLabel(c.provider) },
        { header: "State", cell: (c) => <StateBadge c={c} /> },
        { header: "Events", cell: (c) => c.events.join(", ") || "none", class: "small mono" },
        { header: "Target", cell: (c) => targetOf(c), class: "small mono" },
        // The switch is a column of its own with a visible header, shown to those who may turn it.
        ...(writable ? [{ header: "Enabled", cell: (c: Connector) => <Switch checked={c.enabled} label={`${c.name} enabled`} onChange={(next) => void toggle.setEnabled(c, next)} /> }] : []),
      ]}
    >
      <ConnectorDialog
        open={creating}
        editing={null}
        onClose={() => setCreating(false)}
        onSaved={async (saved) => {
          setCreating(false);
          await reload();
          setMessage(saved.created ? `Created connector ${saved.name}` : `Updated connector ${saved.name} (it already existed for that target)`);
        }}
      />
    </ResourceList>
  );
}

/** The delivery log: each event with its status, attempts and the vendor's last answer; a failed one can be sent again. */
function DeliveryLog({ connector, writable, version, onChanged }: { connector: Connector; writable: boolean; version: number; onChanged: (message: string) => void }) {
  const api = connectorApi.api.admin.connectors({ id: connector.id });
  const [status, setStatus] = useState<"" | "pending" | "delivered" | "failed">("");
  const { data, error, reload } = useLoad(() => call(api.deliveries.get({ query: status ? { limit: "50", status } : { limit: "50" } })), [connector.id, status, version]);
  useLiveReload(reload);
  const [retryError, setRetryError] = useState<string | null>(null);
  const retry = async (d: Delivery) => {
    try {
      await call(api.deliveries({ deliveryId: d.id }).retry.post());
      setRetryError(null);
      await reload();
      onChanged(`Queued ${d.eventType} again`);
    } catch (err) {
      setRetryError(describeError(err));
    }
  };
  return (
    <section aria-labelledby="delivery-log">
      <div class="page-head">
        <h2 id="delivery-log">Delivery log</h2>
        <label>
          Show{" "}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as typeof status)}>
            <option value="">all deliveries</option>
            <option value="pending">pending</option>
            <option value="delivered">delivered</option>
            <option value="failed">failed</option>
          </select>
        </label>
      </div>
      <ErrorMessage error={error ?? retryError} />
      {!data ? (
        !error && <Loading />
      ) : data.length === 0 ? (
        <p class="muted">No deliveries yet.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Deliveries, newest first</caption>
          <TableHead columns={["Event", "Status", "Attempts", "Last answer", "When"]} actions={writable} />
          <tbody>
            {data.map((d) => (
              <tr key={d.id}>
                <th scope="row">
                  <span class="mono">{d.eventType}</span>
                  {d.test && <span class="muted"> (test)</span>}
                  <div class="muted small mono">{d.eventId}</div>
                </th>
                <td>
                  <DeliveryBadge d={d} />
                  {d.status === "pending" && d.nextAttemptAt && (
                    <div class="muted small">
                      next try <When iso={d.nextAttemptAt} />
                    </div>
                  )}
                </td>
                <td>{d.attempts}</td>
                <td class="small">
                  {d.lastStatus !== null && <span class="mono">HTTP {d.lastStatus}</span>}
                  {d.lastError && <div class="error">{d.lastError}</div>}
                  {d.log.at(-1)?.response && <div class="muted mono">{d.log.at(-1)!.response}</div>}
                </td>
                <td>
                  <When iso={d.deliveredAt ?? d.updatedAt} />
                </td>
                {writable && (
                  <td>
                    {d.status !== "delivered" && (
                      <button type="button" class="secondary small" aria-label={`Retry ${d.eventType} ${d.eventId}`} onClick={() => void retry(d)}>
                        Retry
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** One connector: its state and settings, connect (OAuth), enable, test-fire, edit, delete; and its delivery log. */
function ConnectorDetail({ id }: { id: string }) {
  const session = useSession();
  // Connector writes are the admin role's (owner), not every editor's: an editor sees the list read-only.
  const writable = can(session, "manage");
  const api = connectorApi.api.admin.connectors({ id });
  const loaded = useLoad(() => call(api.get()), [session.project.id, id]);
  useLiveReload(loaded.reload);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const [logVersion, setLogVersion] = useState(0);
  const toggle = useEnable(async (_c, m) => {
    await loaded.reload();
    setMessage(m);
  });
  // Back from the vendor's OAuth page: say how it went, once.
  useEffect(() => {
    const params = new URLSearchParams(location.search);
    if (params.get("connected") === "1") setMessage("Connected: the connector is enabled");
    const failed = params.get("oauth_error");
    if (failed) setError(`Connecting failed: ${failed}`);
    if (params.has("connected") || failed) history.replaceState(null, "", location.pathname);
  }, [id]);

  const c = loaded.data;
  if (loaded.error && !c) return <ErrorMessage error={loaded.error} />;
  if (!c) return <Loading />;

  const testFire = async () => {
    setBusy(true);
    try {
      const result = await call(api.test.post({}));
      const d = result.delivery;
      setError(null);
      setMessage(
        !result.done ? `Test ${d.eventType} queued; not attempted yet` : d.status === "delivered" ? `Test ${d.eventType} delivered: HTTP ${d.lastStatus}` : `Test ${d.eventType} failed: ${d.lastError}`,
      );
      setLogVersion((v) => v + 1);
      await loaded.reload();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const notConnected = c.kind === "oauth" && !c.hasCredentials;

  return (
    <>
      <p class="crumbs">
        <Link href="/connectors">Connectors</Link> /
      </p>
      <div class="page-head">
        <h1>{c.name}</h1>
        {writable && (
          <div class="row">
            {c.kind === "oauth" && (
              <button
                type="button"
                class={notConnected ? undefined : "secondary"}
                disabled={busy}
                onClick={async () => {
                  try {
                    await connect(c);
                  } catch (err) {
                    setError(describeError(err));
                  }
                }}
              >
                {notConnected ? `Connect to ${providerLabel(c.provider)}` : "Reconnect"}
              </button>
            )}
            <button type="button" class="secondary" disabled={busy} onClick={testFire}>
              Send test event
            </button>
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Edit connector
            </button>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete connector
            </button>
          </div>
        )}
      </div>
      <ErrorMessage error={error ?? toggle.error} />
      <Status message={message} />
      <table>
        <caption class="visually-hidden">About this connector</caption>
        <tbody>
          <tr>
            <th scope="row">Provider</th>
            <td>
              {providerLabel(c.provider)} <span class="muted mono">({c.provider})</span>
            </td>
          </tr>
          <tr>
            <th scope="row">State</th>
            <td>
              <StateBadge c={c} />{" "}
              {writable && <Switch checked={c.enabled} label={`${c.name} enabled`} disabled={notConnected} onChange={(next) => void toggle.setEnabled(c, next)} />}
              {notConnected && <span class="muted small"> Connect it first: its OAuth flow stores the tokens and enables it.</span>}
            </td>
          </tr>
          <tr>
            <th scope="row">Events</th>
            <td class="mono">{c.events.join(", ") || "none"}</td>
          </tr>
          <tr>
            <th scope="row">Settings</th>
            <td class="mono small">{Object.keys(c.config).length ? JSON.stringify(c.config) : "none yet"}</td>
          </tr>
          <tr>
            <th scope="row">Credentials</th>
            <td>{c.hasCredentials ? `${c.credentialFields.join(", ")}: stored encrypted, never shown` : "none"}</td>
          </tr>
          <tr>
            <th scope="row">Deliveries</th>
            <td>
              {c.deliveries.delivered} delivered, {c.deliveries.pending} pending, {c.deliveries.failed} failed
            </td>
          </tr>
          <tr>
            <th scope="row">Id</th>
            <td class="mono small">{c.id}</td>
          </tr>
        </tbody>
      </table>
      <DeliveryLog connector={c} writable={writable} version={logVersion} onChanged={setMessage} />
      <ConnectorDialog
        open={editing}
        editing={c}
        onClose={() => setEditing(false)}
        onSaved={async (saved) => {
          setEditing(false);
          await loaded.reload();
          setMessage(`Saved connector ${saved.name}`);
        }}
      />
      <DeleteConnectorDialog connector={deleting ? c : null} onClose={() => setDeleting(false)} onDeleted={() => navigate("/connectors")} />
    </>
  );
}

function ConnectorsCard() {
  return <OverviewCard load={loadConnectors} href="/connectors" main={(data) => <Count n={data.length} one="connector" many="connectors" />} more={(data) => `${data.filter((c) => c.enabled).length} enabled`} />;
}

export const connectorsDashboard: DashboardModule = {
  pages: [
    { path: "/connectors", title: "Connectors", nav: { label: "Connectors", order: 57, group: "work" }, empty: { about: "Connectors carry svc's news (alerts, new tickets) to Slack, a webhook or a coding agent.", command: "svc connectors create webhook --name intake --event bug.created --set url=https://hooks.example.com/svc" }, view: ConnectorList },
    { path: "/connectors/:id", title: () => "Connector", view: ({ params }) => <ConnectorDetail id={params.id!} /> },
  ],
  overview: ConnectorsCard,
  palette: async () => (await loadConnectors()).map((c) => ({ label: c.name, kind: "connector", href: `/connectors/${c.id}` })),
};
