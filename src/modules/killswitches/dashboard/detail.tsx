import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { can, useSession } from "../../../web/dashboard/registry";
import { navigate } from "../../../web/dashboard/router";
import { ConfirmDialog, ErrorMessage, Field, Link, Loading, Status, Switch, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { ENVS, type Env, killswitchApi, toggleLabel, useToggle } from "./client";

/** One killswitch: its value and sub-switches per env, adding and removing sub-switches, history with rollback, delete. */
export function KillswitchDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = killswitchApi.api.admin.killswitches({ id: name });
  const { data, error, reload } = useLoad(async () => {
    const [killswitch, history] = await Promise.all([call(api.get()), call(api.history.get({ query: { limit: "50" } }))]);
    return { killswitch, history };
  }, [session.project.id, name]);
  useLiveReload(reload);
  const toggle = useToggle(reload);
  const [newKey, setNewKey] = useState<Record<Env, string>>({ dev: "", staging: "", prod: "" });
  const [keyError, setKeyError] = useState<Partial<Record<Env, string>>>({});
  const [rollback, setRollback] = useState<{ env: Env; version: number } | null>(null);
  const [removal, setRemoval] = useState<{ env: Env; switchKey: string } | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [message, setMessage] = useState<string | null>(null);

  if (error && !data) return <ErrorMessage error={error} />;
  if (!data) return <Loading />;
  const k = data.killswitch;

  const addSwitch = async (env: Env, e: Event) => {
    e.preventDefault();
    const key = newKey[env].trim();
    try {
      await call(api.switch.put({ env, switchKey: key, value: false }));
      setNewKey({ ...newKey, [env]: "" });
      setKeyError({ ...keyError, [env]: undefined });
      await reload();
      setMessage(`Added ${toggleLabel(k.name, env, key)} (off)`);
    } catch (err) {
      setKeyError({ ...keyError, [env]: describeError(err) });
    }
  };

  return (
    <>
      <p class="crumbs">
        <Link href="/killswitches">Killswitches</Link> /
      </p>
      <div class="page-head">
        <h1>{k.name}</h1>
        {writable && (
          <button type="button" class="danger secondary" onClick={() => setDeleting(true)}>
            Delete killswitch
          </button>
        )}
      </div>
      {k.description && <p>{k.description}</p>}
      <ErrorMessage error={toggle.error ?? error} />
      <Status message={toggle.message ?? message} />
      <div class="env-grid">
        {ENVS.map((env) => {
          const state = k.envs[env];
          return (
            <section key={env} class="panel" aria-labelledby={`env-${env}`}>
              <h2 id={`env-${env}`}>{env}</h2>
              <p class="muted small">
                Version {state.version}, <When iso={state.updatedAt} /> by {state.updatedBy}
              </p>
              <div class="row">
                <Switch checked={state.value} label={toggleLabel(k.name, env)} disabled={!writable} onChange={(value) => toggle.request({ name: k.name, env, value })} />
                <span>Flat value</span>
              </div>
              <h3>Sub-switches</h3>
              {Object.keys(state.switches).length === 0 ? (
                <p class="muted small">None on {env}.</p>
              ) : (
                <ul class="switch-list">
                  {Object.entries(state.switches).map(([key, on]) => (
                    <li key={key} class="row">
                      <Switch checked={on} label={toggleLabel(k.name, env, key)} disabled={!writable} onChange={(value) => toggle.request({ name: k.name, env, switchKey: key, value })} />
                      <span>{key}</span>
                      {writable && (
                        <button type="button" class="secondary small" aria-label={`Remove ${toggleLabel(k.name, env, key)}`} onClick={() => setRemoval({ env, switchKey: key })}>
                          Remove
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
              )}
              {writable && (
                <form class="inline" onSubmit={(e) => addSwitch(env, e)} noValidate>
                  <Field label={`New sub-switch on ${env}`} error={keyError[env]}>
                    {(attrs) => <input {...attrs} value={newKey[env]} onInput={(e) => setNewKey({ ...newKey, [env]: (e.target as HTMLInputElement).value })} autoComplete="off" />}
                  </Field>
                  <button type="submit" class="secondary small" disabled={!newKey[env].trim()}>
                    Add
                  </button>
                </form>
              )}
            </section>
          );
        })}
      </div>
      <h2>History</h2>
      <table>
        <caption class="visually-hidden">Published versions of {k.name}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Env</th>
            <th scope="col">Version</th>
            <th scope="col">Change</th>
            <th scope="col">Value</th>
            <th scope="col">Who</th>
            <th scope="col">When</th>
            {writable && <th scope="col"><span class="visually-hidden">Actions</span></th>}
          </tr>
        </thead>
        <tbody>
          {data.history.map((h) => (
            <tr key={`${h.env}:${h.version}`}>
              <td>{h.env}</td>
              <td>{h.version}</td>
              <td>{h.action.replace(/^killswitch\./, "")}</td>
              <td>
                {h.value ? "on" : "off"}
                {Object.keys(h.switches).length > 0 && <span class="muted small"> · {Object.entries(h.switches).map(([s, v]) => `${s} ${v ? "on" : "off"}`).join(", ")}</span>}
              </td>
              <td>{h.actorEmail}</td>
              <td>
                <When iso={h.createdAt} />
              </td>
              {writable && (
                <td>
                  {h.version !== k.envs[h.env].version && (
                    <button type="button" class="secondary small" aria-label={`Roll back ${h.env} to version ${h.version}`} onClick={() => setRollback({ env: h.env, version: h.version })}>
                      Roll back
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {toggle.dialog}
      <ConfirmDialog
        open={rollback !== null}
        title={rollback ? `Roll ${k.name} on ${rollback.env} back to version ${rollback.version}?` : ""}
        message={<p>This publishes the content of that version as a new version{rollback?.env === "prod" ? ", on prod, at once" : ""}.</p>}
        confirmLabel="Roll back"
        danger={rollback?.env === "prod"}
        onConfirm={async () => {
          const done = await call(api.rollback.post(rollback!));
          await reload();
          setMessage(`Rolled ${k.name} on ${rollback!.env} back to version ${rollback!.version} (now version ${done.version})`);
        }}
        onClose={() => setRollback(null)}
      />
      <ConfirmDialog
        open={removal !== null}
        title={removal ? `Remove ${toggleLabel(k.name, removal.env, removal.switchKey)}?` : ""}
        message={<p>SDKs asking for it get their default from then on.</p>}
        confirmLabel="Remove sub-switch"
        danger
        onConfirm={async () => {
          await call(api.switch.delete({ env: removal!.env, switchKey: removal!.switchKey }));
          await reload();
          setMessage(`Removed ${toggleLabel(k.name, removal!.env, removal!.switchKey)}`);
        }}
        onClose={() => setRemoval(null)}
      />
      <ConfirmDialog
        open={deleting}
        title={`Delete ${k.name}?`}
        message={<p>It disappears from every env and from the SDK snapshot; its history goes with it. SDKs fall back to their defaults.</p>}
        confirmLabel="Delete killswitch"
        danger
        onConfirm={async () => {
          await call(api.delete());
          navigate("/killswitches");
        }}
        onClose={() => setDeleting(false)}
      />
    </>
  );
}
