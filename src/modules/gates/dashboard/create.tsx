import { useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { NameFields, useNameForm } from "../../../web/dashboard/create-form";
import { Dialog, Field, FormActions, useLoad } from "../../../web/dashboard/ui";
import { gateApi } from "./client";
import { conditionsSummary, loadTemplates } from "./templates";

/**
 * New gate: a name (checked by the server, its error shown on the field), a
 * description, and optionally a template to start from (one rule of its
 * conditions, at 100%); without one it starts with no rules (off for everyone).
 */
export function CreateGateDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (name: string) => void }) {
  const [template, setTemplate] = useState("");
  const form = useNameForm({ create: (input) => call(gateApi.api.admin.gates.post({ ...input, template: template || undefined })), onCreated, nameOnField: true, reset: () => setTemplate("") });
  // The templates, read at each opening (someone may have added one since).
  const templates = useLoad(() => (open ? loadTemplates() : Promise.resolve(undefined)), [open]);
  const chosen = templates.data?.find((t) => t.id === template);
  return (
    <Dialog open={open} title="New gate" onClose={onClose}>
      <form onSubmit={form.submit} noValidate>
        <NameFields form={form} hint="Up to 128 characters, without “/”, not starting with gate_. SDKs and OFREP evaluate the gate by this name." />
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
        <FormActions error={form.error} onCancel={onClose} submitLabel="Create gate" disabled={form.busy} />
      </form>
    </Dialog>
  );
}
