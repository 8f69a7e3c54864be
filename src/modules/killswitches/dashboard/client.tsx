import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { ConfirmDialog, Switch } from "../../../web/dashboard/ui";
import type { killswitchRoutes } from "../routes";

export const killswitchApi = apiOf<ReturnType<typeof killswitchRoutes>>();
import type { Env } from "../../../lib/envs";

export { ENVS, type Env } from "../../../lib/envs";

/** A change waiting for "yes" (every prod change asks first). */
export type PendingToggle = { name: string; env: Env; switchKey?: string; value: boolean };

export function toggleLabel(name: string, env: Env, switchKey?: string): string {
  return `${switchKey ? `${name}/${switchKey}` : name} on ${env}`;
}

/**
 * A killswitch's value true means the kill is engaged: "on" read as "working", backwards. The dashboard names
 * the states "killed" (in the danger colour) and "live"; the API keeps its boolean.
 */
export const stateWord = (value: boolean) => (value ? "killed" : "live");

/** What a toggle did, in those words: "Killed checkout on prod", "Made checkout on prod live". */
export const toggledText = (label: string, value: boolean) => (value ? `Killed ${label}` : `Made ${label} live`);

/** The switch of a killswitch (or one of its sub-switches) on an env: killed / live, killed in the danger colour. */
export function KillSwitch(props: { value: boolean; label: string; disabled: boolean; onChange: (value: boolean) => void }) {
  return <Switch checked={props.value} label={props.label} disabled={props.disabled} onChange={props.onChange} words={["killed", "live"]} danger />;
}

/** Publishes one toggle; prod goes through a confirmation. Shared by the list and the detail page. */
export function useToggle(onDone: () => Promise<void>) {
  const [pending, setPending] = useState<PendingToggle | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Switches with a publish in flight: a second click is ignored (not disabled: that would drop the keyboard focus).
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set());
  const key = (t: { name: string; env: Env; switchKey?: string }) => toggleLabel(t.name, t.env, t.switchKey);
  const publish = async (t: PendingToggle) => {
    setBusy((b) => new Set(b).add(key(t)));
    try {
      await publishNow(t);
    } finally {
      setBusy((b) => {
        const next = new Set(b);
        next.delete(key(t));
        return next;
      });
    }
  };
  const publishNow = async (t: PendingToggle) => {
    const result = await call(killswitchApi.api.admin.killswitches({ id: t.name }).toggle.post({ env: t.env, switchKey: t.switchKey, value: t.value }));
    // The page shows the new state first, then says so: what is announced is what is on screen.
    await onDone();
    setMessage(`${toggledText(toggleLabel(t.name, t.env, t.switchKey), result.value)} (version ${result.version})`);
    setError(null);
  };
  const request = (t: PendingToggle) => {
    if (busy.has(key(t))) return;
    if (t.env === "prod") setPending(t);
    else publish(t).catch((err) => setError(describeError(err)));
  };
  const label = pending ? toggleLabel(pending.name, pending.env, pending.switchKey) : "";
  const dialog = (
    <ConfirmDialog
      open={pending !== null}
      title={pending ? (pending.value ? `Kill ${label}?` : `Make ${label} live?`) : ""}
      message={<p>This publishes a new version on prod at once: every SDK polling this project sees it within seconds.</p>}
      confirmLabel={pending ? (pending.value ? "Kill in prod" : "Make live in prod") : "Confirm"}
      danger
      onConfirm={() => publish(pending!)}
      onClose={() => setPending(null)}
    />
  );
  return { request, dialog, message, error };
}
