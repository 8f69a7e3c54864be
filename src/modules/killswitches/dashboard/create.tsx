import { useState } from "preact/hooks";
import { ApiFailure, call, describeError } from "../../../web/dashboard/api";
import { Dialog, Field, FormActions } from "../../../web/dashboard/ui";
import { killswitchApi } from "./client";

/** New killswitch: a name (checked by the server, its error shown on the field), a description and a starting value. */
export function CreateKillswitchDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [value, setValue] = useState(false);
  const [nameError, setNameError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const created = await call(killswitchApi.api.admin.killswitches.post({ name: name.trim(), description: description.trim() || undefined, value }));
      setName("");
      setDescription("");
      setValue(false);
      setNameError(null);
      setError(null);
      onCreated(created.name);
    } catch (err) {
      // A bad or taken name is said on the name field; anything else above the buttons.
      if (err instanceof ApiFailure && (err.code === "VALIDATION" || err.code === "CONFLICT" || err.status === 409) && /name/i.test(`${err.message} ${err.detail ?? ""}`)) {
        setNameError(describeError(err));
        setError(null);
      } else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="New killswitch" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name" error={nameError} hint="Up to 128 characters, without “/”. SDKs look the killswitch up by this name.">
          {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
        </Field>
        <Field label="Description">{(attrs) => <input {...attrs} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />}</Field>
        <div class="field">
          <label>
            <input type="checkbox" checked={value} onChange={(e) => setValue((e.target as HTMLInputElement).checked)} /> On at first, on every env
          </label>
        </div>
        <FormActions error={error} onCancel={onClose} submitLabel="Create killswitch" disabled={busy} />
      </form>
    </Dialog>
  );
}
