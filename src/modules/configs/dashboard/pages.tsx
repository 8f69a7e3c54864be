import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ErrorMessage, Link, Loading, SearchBox, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { ENVS, configApi } from "./client";
import { CreateConfigDialog } from "./create";
import { ConfigDetail } from "./detail";

function ConfigList() {
  const session = useSession();
  const [q, setQ] = useState("");
  const [creating, setCreating] = useState(false);
  const { data, error, reload } = useLoad(() => call(configApi.api.admin.configs.get({ query: {} })), [session.project.id]);
  useLiveReload(reload);
  const needle = q.toLowerCase();
  const shown = data?.filter((c) => !q || c.name.toLowerCase().includes(needle) || c.description.toLowerCase().includes(needle));
  return (
    <>
      <div class="page-head">
        <h1>Configs</h1>
        {can(session, "write") && (
          <button type="button" onClick={() => setCreating(true)}>
            New config
          </button>
        )}
      </div>
      <SearchBox label="Search configs" value={q} onInput={setQ} />
      <ErrorMessage error={error} />
      {!data ? (
        !error && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? "No configs yet." : `No config matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Configs with their published version on each env</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              {ENVS.map((env) => (
                <th scope="col" key={env}>
                  {env}
                </th>
              ))}
              <th scope="col">Drafts</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {shown!.map((c) => (
              <tr key={c.id}>
                <th scope="row">
                  <Link href={`/configs/${encodeURIComponent(c.name)}`}>{c.name}</Link>
                  {c.description && <div class="muted small">{c.description}</div>}
                </th>
                {ENVS.map((env) => (
                  <td key={env}>v{c.envs[env].version}</td>
                ))}
                <td>{ENVS.filter((env) => c.drafts[env]).join(", ") || <span class="muted">none</span>}</td>
                <td>
                  <When iso={c.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <CreateConfigDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          navigate(`/configs/${encodeURIComponent(name)}`);
        }}
      />
    </>
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
    { path: "/configs", title: "Configs", nav: { label: "Configs", order: 20 }, view: ConfigList },
    { path: "/configs/:name", title: (p) => `Config ${p.name}`, view: ({ params }) => <ConfigDetail name={params.name!} /> },
  ],
  overview: ConfigsCard,
  palette: async () => {
    const list = await call(configApi.api.admin.configs.get({ query: {} }));
    return list.map((c) => ({ label: c.name, kind: "config", href: `/configs/${encodeURIComponent(c.name)}` }));
  },
};
