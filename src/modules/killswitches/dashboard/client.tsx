import { useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { ConfirmDialog } from "../../../web/dashboard/ui";
import type { killswitchRoutes } from "../routes";

export const killswitchApi = apiOf<ReturnType<typeof killswitchRoutes>>();
import type { Env } from "../../../lib/envs";

export { ENVS, type Env } from "../../../lib/envs";

/** A change waiting for "yes" (every prod change asks first). */
export type PendingToggle = { name: string; env: Env; switchKey?: string; value: boolean };

export function toggleLabel(name: string, env: Env, switchKey?: string): string {
  return `${switchKey ? `${name}/${switchKey}` : name} on ${env}`;
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
    setMessage(`Turned ${toggleLabel(t.name, t.env, t.switchKey)} ${result.value ? "on" : "off"} (version ${result.version})`);
    setError(null);
  };
  const request = (t: PendingToggle) => {
    if (busy.has(key(t))) return;
    if (t.env === "prod") setPending(t);
    else publish(t).catch((err) => setError(describeError(err)));
  };
  const dialog = (
    <ConfirmDialog
      open={pending !== null}
      title={pending ? `Turn ${toggleLabel(pending.name, pending.env, pending.switchKey)} ${pending.value ? "on" : "off"}?` : ""}
      message={<p>This publishes a new version on prod at once: every SDK polling this project sees it within seconds.</p>}
      confirmLabel={pending ? `Turn ${pending.value ? "on" : "off"} in prod` : "Confirm"}
      danger
      onConfirm={() => publish(pending!)}
      onClose={() => setPending(null)}
    />
  );
  return { request, dialog, message, error };
}

