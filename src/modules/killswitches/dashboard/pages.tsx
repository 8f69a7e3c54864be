import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { type DashboardModule, can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ErrorMessage, Link, Loading, SearchBox, Status, Switch, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { ENVS, killswitchApi, toggleLabel, useToggle } from "./client";
import { CreateKillswitchDialog } from "./create";
import { KillswitchDetail } from "./detail";

function KillswitchList() {
  const session = useSession();
  const [q, setQ] = useState("");
  const [creating, setCreating] = useState(false);
  const { data, error, reload } = useLoad(() => call(killswitchApi.api.admin.killswitches.get({ query: {} })), [session.project.id]);
  useLiveReload(reload);
  const toggle = useToggle(reload);
  const writable = can(session, "write");
  const shown = data?.filter((k) => !q || k.name.toLowerCase().includes(q.toLowerCase()) || (k.description ?? "").toLowerCase().includes(q.toLowerCase()));
  return (
    <>
      <div class="page-head">
        <h1>Killswitches</h1>
        {writable && (
          <button type="button" onClick={() => setCreating(true)}>
            New killswitch
          </button>
        )}
      </div>
      <SearchBox label="Search killswitches" value={q} onInput={setQ} />
      <ErrorMessage error={error ?? toggle.error} />
      <Status message={toggle.message} />
      {!data ? (
        !error && <Loading />
      ) : shown!.length === 0 ? (
        <p class="muted">{data.length === 0 ? "No killswitches yet." : `No killswitch matches “${q}”.`}</p>
      ) : (
        <table>
          <caption class="visually-hidden">Killswitches and their value on each env</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              {ENVS.map((env) => (
                <th scope="col" key={env}>
                  {env}
                </th>
              ))}
              <th scope="col">Sub-switches</th>
            </tr>
          </thead>
          <tbody>
            {shown!.map((k) => (
              <tr key={k.id}>
                <th scope="row">
                  <Link href={`/killswitches/${encodeURIComponent(k.name)}`}>{k.name}</Link>
                  {k.description && <div class="muted small">{k.description}</div>}
                </th>
                {ENVS.map((env) => (
                  <td key={env}>
                    <Switch
                      checked={k.envs[env].value}
                      label={toggleLabel(k.name, env)}
                      disabled={!writable}
                      onChange={(value) => toggle.request({ name: k.name, env, value })}
                    />
                  </td>
                ))}
                <td>{Object.keys(k.envs.prod.switches).length || <span class="muted">none</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {toggle.dialog}
      <CreateKillswitchDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name) => {
          setCreating(false);
          navigate(`/killswitches/${encodeURIComponent(name)}`);
        }}
      />
    </>
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
    { path: "/killswitches", title: "Killswitches", nav: { label: "Killswitches", order: 10 }, view: KillswitchList },
    { path: "/killswitches/:name", title: (p) => `Killswitch ${p.name}`, view: ({ params }) => <KillswitchDetail name={params.name!} /> },
  ],
  overview: KillswitchesCard,
  palette: async () => {
    const list = await call(killswitchApi.api.admin.killswitches.get({ query: {} }));
    return list.map((k) => ({ label: k.name, kind: "killswitch", href: `/killswitches/${encodeURIComponent(k.name)}` }));
  },
};
