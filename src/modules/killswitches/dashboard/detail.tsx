import { useState } from "preact/hooks";
import { call, describeError } from "../../../web/dashboard/api";
import { DetailFrame, VersionHistory, deleteZone, notLoaded } from "../../../web/dashboard/detail-frame";
import { can, useSession } from "../../../web/dashboard/registry";
import { ConfirmDialog, Field, When, useLiveReload, useLoad } from "../../../web/dashboard/ui";
import { ENVS, type Env, KillSwitch, killswitchApi, stateWord, toggleLabel, useToggle } from "./client";
import { FlagUsagePanel } from "../../usage/dashboard/usage-panel";
import { CodeReferences } from "../../refs/dashboard/references";

const BACK = { href: "/killswitches", label: "Killswitches" };

/** One killswitch: its value and sub-switches per env, adding and removing sub-switches, history with rollback, delete. */
export function KillswitchDetail({ name }: { name: string }) {
  const session = useSession();
  const writable = can(session, "write");
  const api = killswitchApi.api.admin.killswitches({ id: name });
  const load = useLoad(async () => {
    const [killswitch, history] = await Promise.all([call(api.get()), call(api.history.get({ query: { limit: "50" } }))]);
    return { killswitch, history };
  }, [session.project.id, name]);
  const { data, error, reload } = load;
  useLiveReload(reload);
  const toggle = useToggle(reload);
  const [newKey, setNewKey] = useState<Record<Env, string>>({ dev: "", staging: "", prod: "" });
  const [keyError, setKeyError] = useState<Partial<Record<Env, string>>>({});
  const [rollback, setRollback] = useState<{ env: Env; version: number } | null>(null);
  const [removal, setRemoval] = useState<{ env: Env; switchKey: string } | null>(null);
  // A sub-switch about to be added on prod: it publishes at once, so it asks first, as a prod toggle does.
  const [adding, setAdding] = useState<{ env: Env; switchKey: string } | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  if (!data) return notLoaded(load);
  const k = data.killswitch;

  const addSwitch = async (env: Env, key: string) => {
    try {
      await call(api.switch.put({ env, switchKey: key, value: false }));
      setNewKey({ ...newKey, [env]: "" });
      setKeyError({ ...keyError, [env]: undefined });
      await reload();
      setMessage(`Added ${toggleLabel(k.name, env, key)} (${stateWord(false)})`);
    } catch (err) {
      setKeyError({ ...keyError, [env]: describeError(err) });
    }
  };
  const requestAdd = (env: Env, e: Event) => {
    e.preventDefault();
    const key = newKey[env].trim();
    if (env === "prod") setAdding({ env, switchKey: key });
    else void addSwitch(env, key);
  };

  const danger = deleteZone("killswitch", k.name, "It disappears from every env and from the SDK snapshot; its history goes with it. SDKs fall back to their defaults.", () => call(api.delete()));
  return (
    <DetailFrame back={BACK} title={k.name} description={k.description} writable={writable} danger={danger} error={toggle.error ?? error} message={toggle.message ?? message}>
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
                <KillSwitch value={state.value} label={toggleLabel(k.name, env)} disabled={!writable} onChange={(value) => toggle.request({ name: k.name, env, value })} />
                <span>Flat value</span>
              </div>
              <h3>Sub-switches</h3>
              {Object.keys(state.switches).length === 0 ? (
                <p class="muted small">None on {env}.</p>
              ) : (
                <ul class="switch-list">
                  {Object.entries(state.switches).map(([key, on]) => (
                    <li key={key} class="row">
                      <KillSwitch value={on} label={toggleLabel(k.name, env, key)} disabled={!writable} onChange={(value) => toggle.request({ name: k.name, env, switchKey: key, value })} />
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
                <form class="inline" onSubmit={(e) => requestAdd(env, e)} noValidate>
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
      <VersionHistory
        caption={`Published versions of ${k.name}, newest first`}
        rows={data.history}
        prefix="killswitch."
        withEnv
        columns={[
          {
            header: "Value",
            cell: (h) => (
              <>
                {stateWord(h.value)}
                {Object.keys(h.switches).length > 0 && <span class="muted small"> · {Object.entries(h.switches).map(([s, v]) => `${s} ${stateWord(v)}`).join(", ")}</span>}
              </>
            ),
          },
        ]}
        current={(h) => k.envs[h.env].version}
        onRollback={writable && ((h) => setRollback({ env: h.env, version: h.version }))}
      />
      {toggle.dialog}
      <ConfirmDialog
        open={adding !== null}
        title={adding ? `Add ${toggleLabel(k.name, adding.env, adding.switchKey)}?` : ""}
        message={<p>This publishes a new version on prod at once, with the sub-switch {stateWord(false)}: every SDK polling this project sees it within seconds.</p>}
        confirmLabel="Add on prod"
        danger
        onConfirm={() => addSwitch(adding!.env, adding!.switchKey)}
        onClose={() => setAdding(null)}
      />
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
      <FlagUsagePanel name={name} />
      <CodeReferences name={k.name} />
    </DetailFrame>
  );
}
