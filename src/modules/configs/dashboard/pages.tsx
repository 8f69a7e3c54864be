import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, Loading, When, useLoad } from "../../../web/dashboard/ui";
import { ENVS, configApi } from "./client";
import { CreateConfigDialog } from "./create";
import { ConfigDetail } from "./detail";

type Config = NonNullable<Awaited<ReturnType<typeof configApi.api.admin.configs.get>>["data"]>[number];

function ConfigList() {
  const session = useSession();
  const [creating, setCreating] = useState(false);
  const { data, error } = useLiveList(() => call(configApi.api.admin.configs.get({ query: {} })), [session.project.id]);
  return (
    <ResourceList
      title="Configs"
      noun="config"
      items={data}
      error={error}
      create={can(session, "write") && { label: "New config", onClick: () => setCreating(true) }}
      searchText={(c) => [c.name, c.description]}
      caption="Configs with their published version on each env"
      rowKey={(c) => c.id}
      name={(c) => <NameCell href={`/configs/${encodeURIComponent(c.name)}`} name={c.name} description={c.description} />}
      columns={[
        ...ENVS.map((env) => ({ header: env, cell: (c: Config) => `v${c.envs[env].version}` })),
        { header: "Drafts", cell: (c) => ENVS.filter((env) => c.drafts[env]).join(", ") || <span class="muted">none</span> },
        { header: "Updated", cell: (c) => <When iso={c.updatedAt} /> },
      ]}
    >
      <CreateConfigDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          navigate(`/configs/${encodeURIComponent(name)}`);
        }}
      />
    </ResourceList>
  );
}

function ConfigsCard() {
  const session = useSession();
  const { data } = useLoad(() => call(configApi.api.admin.configs.get({ query: {} })), [session.project.id]);
  if (!data) return <Loading />;
  const drafts = data.filter((c) => ENVS.some((env) => c.drafts[env])).length;
  return (
    <>
      <Link href="/configs">
        <strong>{data.length}</strong> configs
      </Link>
      <span class="muted"> · {drafts} with drafts</span>
    </>
  );
}

export const configsDashboard: DashboardModule = {
  pages: [
    { path: "/configs", title: "Configs", nav: { label: "Configs", order: 20, group: "release" }, empty: { about: "Configs are typed values (JSON checked against a schema) that your code reads at run time and you change per environment without a deploy.", command: "svc configs create limits --value '{\"perMinute\":60}'" }, view: ConfigList },
    { path: "/configs/:name", title: (p) => `Config ${p.name}`, view: ({ params }) => <ConfigDetail name={params.name!} /> },
  ],
  overview: ConfigsCard,
  palette: async () => {
    const list = await call(configApi.api.admin.configs.get({ query: {} }));
    return list.map((c) => ({ label: c.name, kind: "config", href: `/configs/${encodeURIComponent(c.name)}` }));
  },
};
