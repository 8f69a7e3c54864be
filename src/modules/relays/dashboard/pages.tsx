import { useState } from "preact/hooks";
import { apiOf, call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Badge, ConfirmDialog, When } from "../../../web/dashboard/ui";
import type { relaysRoutes } from "../routes";

const relayApi = apiOf<ReturnType<typeof relaysRoutes>>();
type Relay = NonNullable<Awaited<ReturnType<typeof relayApi.api.admin.relays.get>>["data"]>[number];

const loadRelays = () => call(relayApi.api.admin.relays.get({ query: {} }));

/** The edge relays this server has seen for the project: connected or stale, version, address; owners forget one. */
function RelaysPage() {
  const session = useSession();
  const { data, error, reload } = useLiveList(loadRelays, [session.project.id]);
  const [forgetting, setForgetting] = useState<Relay | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  return (
    <ResourceList
      title="Edge relays"
      noun="edge relay"
      intro={
        <>
          Relays (<code>svc serve --relay</code>) serve this project's SDK reads near your apps and forward their events. Each names itself on its calls here: connected while one of its
          streams is open (or was within the last 90 seconds), else stale, serving its last snapshots or gone.
        </>
      }
      items={data}
      error={error}
      message={message}
      searchText={(r) => [r.id, r.name, r.address]}
      caption="Edge relays with their state, version, address and when they were last seen"
      rowKey={(r) => r.id}
      name={(r) => (
        <>
          <strong>{r.name}</strong>
          <div class="muted small mono">{r.id}</div>
        </>
      )}
      columns={[
        { header: "State", cell: (r) => (r.connected ? <Badge tone="ok">connected</Badge> : <Badge tone="danger">stale</Badge>) },
        { header: "Version", cell: (r) => r.version, class: "mono" },
        { header: "Address", cell: (r) => r.address, class: "mono" },
        { header: "Streams", cell: (r) => r.streams.join(", ") || "none" },
        { header: "Last seen", cell: (r) => <When iso={r.lastSeenAt} /> },
        { header: "First seen", cell: (r) => <When iso={r.firstSeenAt} /> },
      ]}
      actions={
        can(session, "manage") &&
        ((r) => (
          <button type="button" class="secondary" aria-label={`Forget edge relay ${r.name}`} onClick={() => setForgetting(r)}>
            Forget
          </button>
        ))
      }
    >
      <ConfirmDialog
        open={forgetting !== null}
        title={`Forget edge relay ${forgetting?.name ?? ""}`}
        message={<p>Its row goes; a relay still running is listed again at its next call.</p>}
        confirmLabel="Forget relay"
        danger
        onConfirm={async () => {
          const relay = forgetting!;
          await call(relayApi.api.admin.relays({ id: relay.id }).delete());
          await reload();
          setMessage(`Forgot ${relay.name}.`);
        }}
        onClose={() => setForgetting(null)}
      />
    </ResourceList>
  );
}

export const relaysDashboard: DashboardModule = {
  pages: [
    {
      path: "/relays",
      title: "Edge relays",
      // Beside SDK keys (60): relays serve what the keys read.
      nav: { label: "Edge relays", order: 62, group: "project" },
      empty: { about: "An edge relay serves this project's SDK reads near your apps, from a copy it keeps in step with this server, and forwards their events here.", command: "svc serve --relay https://svc.example.com --key $SERVER_KEY --relay-name edge-fra-1" },
      view: RelaysPage,
    },
  ],
};
