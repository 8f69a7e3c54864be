import { call } from "../../../web/dashboard/api";
import { listAndDetail, overviewCard, useCreateThenOpen } from "../../../web/dashboard/detail-frame";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { When } from "../../../web/dashboard/ui";
import { ENVS, configApi } from "./client";
import { CreateConfigDialog } from "./create";
import { ConfigDetail } from "./detail";

type Config = NonNullable<Awaited<ReturnType<typeof configApi.api.admin.configs.get>>["data"]>[number];

const loadConfigs = () => call(configApi.api.admin.configs.get({ query: {} }));
const href = (name: string) => `/configs/${encodeURIComponent(name)}`;

function ConfigList() {
  const session = useSession();
  const create = useCreateThenOpen(href);
  const { data, error } = useLiveList(loadConfigs, [session.project.id]);
  return (
    <ResourceList
      title="Configs"
      noun="config"
      items={data}
      error={error}
      create={can(session, "write") && { label: "New config", onClick: create.open }}
      searchText={(c) => [c.name, c.description]}
      caption="Configs with their published version on each env"
      rowKey={(c) => c.id}
      name={(c) => <NameCell href={href(c.name)} name={c.name} description={c.description} />}
      columns={[
        ...ENVS.map((env) => ({ header: env, cell: (c: Config) => `v${c.envs[env].version}` })),
        { header: "Drafts", cell: (c) => ENVS.filter((env) => c.drafts[env]).join(", ") || <span class="muted">none</span> },
        { header: "Updated", cell: (c) => <When iso={c.updatedAt} /> },
      ]}
    >
      <CreateConfigDialog {...create.dialog} />
    </ResourceList>
  );
}

export const configsDashboard: DashboardModule = {
  pages: listAndDetail({ path: "/configs", title: "Configs", order: 20, group: "release", empty: { about: "Configs are typed values (JSON checked against a schema) that your code reads at run time and you change per environment without a deploy.", command: "svc configs create limits --value '{\"perMinute\":60}'" }, list: ConfigList, param: "name", one: (name) => `Config ${name}`, detail: (name) => <ConfigDetail name={name} /> }),
  overview: overviewCard(loadConfigs, (list) => ({ href: "/configs", count: list.length, label: "configs", more: `${list.filter((c) => ENVS.some((env) => c.drafts[env])).length} with drafts` })),
  palette: async () => (await loadConfigs()).map((c) => ({ label: c.name, kind: "config", href: href(c.name) })),
};
