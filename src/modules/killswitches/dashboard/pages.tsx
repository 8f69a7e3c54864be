import { call } from "../../../web/dashboard/api";
import { listAndDetail, overviewCard, useCreateThenOpen } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { ENVS, KillSwitch, killswitchApi, toggleLabel, useToggle } from "./client";
import { CreateKillswitchDialog } from "./create";
import { KillswitchDetail } from "./detail";

type Killswitch = NonNullable<Awaited<ReturnType<typeof killswitchApi.api.admin.killswitches.get>>["data"]>[number];

const loadKillswitches = () => call(killswitchApi.api.admin.killswitches.get({ query: {} }));
const href = (name: string) => `/killswitches/${encodeURIComponent(name)}`;

function KillswitchList() {
  const session = useSession();
  const create = useCreateThenOpen(href);
  const { data, error, reload } = useLiveList(loadKillswitches, [session.project.id]);
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
      create={writable && { label: "New killswitch", onClick: create.open }}
      searchText={(k) => [k.name, k.description]}
      caption="Killswitches and their value on each env"
      rowKey={(k) => k.id}
      name={(k) => <NameCell href={href(k.name)} name={k.name} description={k.description} />}
      columns={[
        ...ENVS.map((env) => ({
          header: env,
          cell: (k: Killswitch) => <KillSwitch value={k.envs[env].value} label={toggleLabel(k.name, env)} disabled={!writable} onChange={(value) => toggle.request({ name: k.name, env, value })} />,
        })),
        { header: "Sub-switches", cell: (k) => Object.keys(k.envs.prod.switches).length || <span class="muted">none</span> },
      ]}
    >
      {toggle.dialog}
      <CreateKillswitchDialog {...create.dialog} />
    </ResourceList>
  );
}

export const killswitchesDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/killswitches", title: "Killswitches", order: 10, group: "release", empty: { about: "A killswitch turns a feature off everywhere within a second, per environment and without a deploy: your code asks svc.isKilled(\"checkout\").", command: "svc killswitches create checkout" }, list: KillswitchList, param: "name", one: (name) => `Killswitch ${name}`, detail: (name) => <KillswitchDetail name={name} /> }),
  overview: overviewCard(loadKillswitches, (list) => ({ href: "/killswitches", count: list.length, label: "killswitches", more: `${list.filter((k) => k.envs.prod.value).length} killed in prod` })),
  palette: async () => (await loadKillswitches()).map((k) => ({ label: k.name, kind: "killswitch", href: href(k.name) })),
};
