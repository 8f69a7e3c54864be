import { useId, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { NameFields, useNameForm } from "../../../web/dashboard/create-form";
import { Dialog, FormActions } from "../../../web/dashboard/ui";
import { killswitchApi } from "./client";

/** New killswitch: a name (checked by the server, its error shown on the field), a description and whether it starts killed. */
export function CreateKillswitchDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => void }) {
  const [value, setValue] = useState(false);
  const hintId = useId();
  const form = useNameForm({ create: (input) => call(killswitchApi.api.admin.killswitches.post({ ...input, value })), onCreated, nameOnField: true, reset: () => setValue(false) });
  return (
    <Dialog open={open} title="New killswitch" onClose={onClose}>
      <form onSubmit={form.submit} noValidate>
        <NameFields form={form} hint="Up to 128 characters, without “/”. SDKs look the killswitch up by this name." />
        <div class="field">
          <label>
            <input type="checkbox" aria-describedby={hintId} checked={value} onChange={(e) => setValue((e.target as HTMLInputElement).checked)} /> Killed at first, on every env
          </label>
          <p class="hint" id={hintId}>
            Killed means the kill is engaged: SDKs read true. Unchecked, it starts live (false).
          </p>
        </div>
        <FormActions error={form.error} onCancel={onClose} submitLabel="Create killswitch" disabled={form.busy} />
      </form>
    </Dialog>
  );
}

