import { useState } from "preact/hooks";
import { ApiFailure, call, describeError } from "../../../web/dashboard/api";
import { Dialog, ErrorMessage, Field } from "../../../web/dashboard/ui";
import { gateApi } from "./client";

/** New gate: a name (checked by the server, its error shown on the field) and a description; it starts with no rules (off for everyone). */
export function CreateGateDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [nameError, setNameError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const created = await call(gateApi.api.admin.gates.post({ name: name.trim(), description: description.trim() || undefined }));
      setName("");
      setDescription("");
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
    <Dialog open={open} title="New gate" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name" error={nameError} hint="Up to 128 characters, without “/”, not starting with gate_. SDKs and OFREP evaluate the gate by this name.">
          {(attrs) => <input {...attrs} required value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
        </Field>
        <Field label="Description">{(attrs) => <input {...attrs} value={description} onInput={(e) => setDescription((e.target as HTMLInputElement).value)} />}</Field>
        <p class="muted small">It starts with no rules on every env: off for everyone until you publish some.</p>
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            Create gate
          </button>
        </div>
      </form>
    </Dialog>
  );
}
