import { useState } from "preact/hooks";
import { ApiFailure, call, describeError } from "../../../web/dashboard/api";
import { Dialog, Field, FormActions, useLoad } from "../../../web/dashboard/ui";
import { gateApi } from "./client";
import { conditionsSummary, loadTemplates } from "./templates";

/**
 * New gate: a name (checked by the server, its error shown on the field), a
 * description, and optionally a template to start from (one rule of its
 * conditions, at 100%); without one it starts with no rules (off for everyone).
 */
export function CreateGateDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [template, setTemplate] = useState("");
  const [nameError, setNameError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The templates, read at each opening (someone may have added one since).
  const templates = useLoad(() => (open ? loadTemplates() : Promise.resolve(undefined)), [open]);
  const chosen = templates.data?.find((t) => t.id === template);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const created = await call(gateApi.api.admin.gates.post({ name: name.trim(), description: description.trim() || undefined, template: template || undefined }));
      setName("");
      setDescription("");
      setTemplate("");
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
        <Field label="Start from template" hint={templates.error ? `Templates could not be loaded: ${templates.error}` : "Optional: its conditions become the gate's first rule, at 100%."}>
          {(attrs) => (
            <select {...attrs} value={template} onChange={(e) => setTemplate((e.target as HTMLSelectElement).value)}>
              <option value="">None: no rules</option>
              {templates.data?.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                  {t.builtIn ? " (built-in)" : ""}
                </option>
              ))}
            </select>
          )}
        </Field>
        <p class="muted small">
          {chosen ? (
            <>
              It starts with one rule on every env: <span class="mono">{conditionsSummary(chosen.rules)}</span> → 100%.
            </>
          ) : (
            "It starts with no rules on every env: off for everyone until you publish some."
          )}
        </p>
        <FormActions error={error} onCancel={onClose} submitLabel="Create gate" disabled={busy} />
      </form>
    </Dialog>
  );
}
