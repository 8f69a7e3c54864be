import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, Loading, Switch, useLoad } from "../../../web/dashboard/ui";
import { ENVS, killswitchApi, toggleLabel, useToggle } from "./client";
import { CreateKillswitchDialog } from "./create";
import { KillswitchDetail } from "./detail";

type Killswitch = NonNullable<Awaited<ReturnType<typeof killswitchApi.api.admin.killswitches.get>>["data"]>[number];

function KillswitchList() {
  const session = useSession();
  const [creating, setCreating] = useState(false);
  const { data, error, reload } = useLiveList(() => call(killswitchApi.api.admin.killswitches.get({ query: {} })), [session.project.id]);
  const toggle = useToggle(reload);
  const writable = can(session, "write");
  return (
    <ResourceList
      title="Killswitches"
      noun="killswitch"
      plural="killswitches"
      items={data}
      error={error ?? toggle.error}
      message={toggle.message}
      create={writable && { label: "New killswitch", onClick: () => setCreating(true) }}
      searchText={(k) => [k.name, k.description]}
      caption="Killswitches and their value on each env"
      rowKey={(k) => k.id}
      name={(k) => <NameCell href={`/killswitches/${encodeURIComponent(k.name)}`} name={k.name} description={k.description} />}
      columns={[
        ...ENVS.map((env) => ({
          header: env,
          cell: (k: Killswitch) => (
            <Switch checked={k.envs[env].value} label={toggleLabel(k.name, env)} disabled={!writable} onChange={(value) => toggle.request({ name: k.name, env, value })} />
          ),
        })),
        { header: "Sub-switches", cell: (k) => Object.keys(k.envs.prod.switches).length || <span class="muted">none</span> },
      ]}
    >
      {toggle.dialog}
      <CreateKillswitchDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          navigate(`/killswitches/${encodeURIComponent(name)}`);
        }}
      />
    </ResourceList>
  );
}

function KillswitchesCard() {
  const session = useSession();
  const { data } = useLoad(() => call(killswitchApi.api.admin.killswitches.get({ query: {} })), [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href="/killswitches">
        <strong>{data.length}</strong> killswitches
      </Link>
      <span class="muted"> · {data.filter((k) => k.envs.prod.value).length} on in prod</span>
    </>
  );
}

export const killswitchesDashboard: DashboardModule = {
  pages: [
    { path: "/killswitches", title: "Killswitches", nav: { label: "Killswitches", order: 10, group: "release" }, empty: { about: "A killswitch turns a feature off everywhere within a second, per environment and without a deploy: your code asks svc.isKilled(\"checkout\").", command: "svc killswitches create checkout" }, view: KillswitchList },
    { path: "/killswitches/:name", title: (p) => `Killswitch ${p.name}`, view: ({ params }) => <KillswitchDetail name={params.name!} /> },
  ],
  overview: KillswitchesCard,
  palette: async () => {
    const list = await call(killswitchApi.api.admin.killswitches.get({ query: {} }));
    return list.map((k) => ({ label: k.name, kind: "killswitch", href: `/killswitches/${encodeURIComponent(k.name)}` }));
  },
};
