import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { NameCell, ResourceList, useLiveList } from "../../../web/dashboard/resource-list";
import { Link, Loading, When, useLoad } from "../../../web/dashboard/ui";
import { ENVS, gateApi, rulesCount } from "./client";
import { CreateGateDialog } from "./create";
import { GateDetail } from "./detail";
import { TemplateList } from "./templates";

type Gate = NonNullable<Awaited<ReturnType<typeof gateApi.api.admin.gates.get>>["data"]>[number];

function GateList() {
  const session = useSession();
  const [creating, setCreating] = useState(false);
  const { data, error } = useLiveList(() => call(gateApi.api.admin.gates.get({ query: {} })), [session.project.id]);
  return (
    <ResourceList
      title="Gates"
      noun="gate"
      items={data}
      error={error}
      create={can(session, "write") && { label: "New gate", onClick: () => setCreating(true) }}
      searchText={(g) => [g.name, g.description]}
      caption="Gates with their rule count and published version on each env"
      rowKey={(g) => g.id}
      name={(g) => <NameCell href={`/gates/${encodeURIComponent(g.name)}`} name={g.name} description={g.description} />}
      columns={[
        ...ENVS.map((env) => ({
          header: env,
          cell: (g: Gate) => (
            <>
              {rulesCount(g.envs[env].rules.length)} <span class="muted small">· v{g.envs[env].version}</span>
            </>
          ),
        })),
        { header: "Updated", cell: (g) => <When iso={g.updatedAt} /> },
      ]}
    >
      <CreateGateDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          navigate(`/gates/${encodeURIComponent(name)}`);
        }}
      />
    </ResourceList>
  );
}

function GatesCard() {
  const session = useSession();
  const { data } = useLoad(() => call(gateApi.api.admin.gates.get({ query: {} })), [session.project.id]);
  if (!data) return <Loading />;
  return (
    <>
      <Link href="/gates">
        <strong>{data.length}</strong> gates
      </Link>
      <span class="muted"> · {data.filter((g) => g.envs.prod.rules.length > 0).length} with rules in prod</span>
    </>
  );
}

export const gatesDashboard: DashboardModule = {
  pages: [
    { path: "/gates", title: "Gates", nav: { label: "Gates", order: 15, group: "release" }, empty: { about: "Gates decide who gets a feature: rules on attributes (plan, country, a percentage of users) that the SDK evaluates in your code.", command: "svc gates create new-checkout" }, view: GateList },
    // Before /gates/:name: the first page whose path matches wins (no gate can be named "templates").
    { path: "/gates/templates", title: "Gate templates", nav: { label: "Gate templates", order: 16, group: "release" }, view: TemplateList },
    { path: "/gates/:name", title: (p) => `Gate ${p.name}`, view: ({ params }) => <GateDetail name={params.name!} /> },
  ],
  overview: GatesCard,
  palette: async () => {
    const list = await call(gateApi.api.admin.gates.get({ query: {} }));
    return list.map((g) => ({ label: g.name, kind: "gate", href: `/gates/${encodeURIComponent(g.name)}` }));
  },
};
