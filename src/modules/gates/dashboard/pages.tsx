import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ErrorMessage, Link, Loading, SearchBox, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { ENVS, gateApi, rulesCount } from "./client";
import { CreateGateDialog } from "./create";
import { GateDetail } from "./detail";
import { TemplateList } from "./templates";

function GateList() {
  const session = useSession();
  const [q, setQ] = useState("");
  const [creating, setCreating] = useState(false);
  const { data, error, reload } = useLoad(() => call(gateApi.api.admin.gates.get({ query: {} })), [session.project.id]);
  useLiveReload(reload);
  const needle = q.toLowerCase();
  const shown = data?.filter((g) => !q || g.name.toLowerCase().includes(needle) || g.description.toLowerCase().includes(needle));
  return (
    <>
      <div class="page-head">
        <h1>Gates</h1>
        {can(session, "write") && (
          <button type="button" onClick={() => setCreating(true)}>
            New gate
          </button>
        )}
      </div>
      <SearchBox label="Search gates" value={q} onInput={setQ} />
      <ErrorMessage error={error} />
      {!data ? (
        !error && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? "No gates yet." : `No gate matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Gates with their rule count and published version on each env</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              {ENVS.map((env) => (
                <th scope="col" key={env}>
                  {env}
                </th>
              ))}
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {shown!.map((g) => (
              <tr key={g.id}>
                <th scope="row">
                  <Link href={`/gates/${encodeURIComponent(g.name)}`}>{g.name}</Link>
                  {g.description && <div class="muted small">{g.description}</div>}
                </th>
                {ENVS.map((env) => (
                  <td key={env}>
                    {rulesCount(g.envs[env].rules.length)} <span class="muted small">· v{g.envs[env].version}</span>
                  </td>
                ))}
                <td>
                  <When iso={g.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateGateDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          navigate(`/gates/${encodeURIComponent(name)}`);
        }}
      />
    </>
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
    { path: "/gates", title: "Gates", nav: { label: "Gates", order: 15 }, view: GateList },
    // Before /gates/:name: the first page whose path matches wins (no gate can be named "templates").
    { path: "/gates/templates", title: "Gate templates", nav: { label: "Gate templates", order: 16 }, view: TemplateList },
    { path: "/gates/:name", title: (p) => `Gate ${p.name}`, view: ({ params }) => <GateDetail name={params.name!} /> },
  ],
  overview: GatesCard,
  palette: async () => {
    const list = await call(gateApi.api.admin.gates.get({ query: {} }));
    return list.map((g) => ({ label: g.name, kind: "gate", href: `/gates/${encodeURIComponent(g.name)}` }));
  },
};
