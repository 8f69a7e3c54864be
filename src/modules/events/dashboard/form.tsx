import { useEffect, useId, useState } from "preact/hooks";
import { ApiFailure, call } from "../../../web/dashboard/api";
import { DescriptionField, NameField, Options, TableHead, TextField, useDialogForm, RemoveButton } from "../../../web/dashboard/form-kit";
import { Dialog, ErrorMessage, FormActions, errorsByField } from "../../../web/dashboard/ui";
import { type CatalogEvent, PROPERTY_TYPES, type PropertyType, eventApi } from "./client";

const FIELDS = ["name", "folder", "description", "properties"] as const;
type FieldName = (typeof FIELDS)[number];

let nextKey = 0;
type DraftProperty = { key: number; name: string; type: PropertyType; required: boolean; description: string };
type Form = { name: string; folder: string; description: string; properties: DraftProperty[] };

const emptyProperty = (): DraftProperty => ({ key: ++nextKey, name: "", type: "string", required: false, description: "" });

function formOf(e: CatalogEvent | null): Form {
  if (!e) return { name: "", folder: "", description: "", properties: [] };
  return {
    name: e.name,
    folder: e.folder,
    description: e.description,
    properties: e.properties.map((p) => ({
      key: ++nextKey,
      name: p.name,
      type: (PROPERTY_TYPES as readonly string[]).includes(p.type) ? (p.type as PropertyType) : "string",
      required: p.required,
      description: p.description,
    })),
  };
}

/** Where a refusal points inside the list: `properties[1].name` (the service) or `properties.1.type` (the schema). 0-based. */
type PropertyError = { row: number; field: string | undefined; message: string };
function propertyErrorOf(text: string | undefined): PropertyError | null {
  const m = text ? /^(?:([^:]*): )?properties(?:\[(\d+)\]|\.(\d+))(?:\.([A-Za-z]+))?\s*:\s*([\s\S]*)$/.exec(text) : null;
  return m ? { row: Number(m[2] ?? m[3]), field: m[4], message: m[1] ? `${m[5]!.trim()} (${m[1]})` : m[5]!.trim() } : null;
}

/**
 * Register an event (`editing` null) or edit one (everything but its name):
 * folder, description and its properties, one row each (name, type,
 * required, description). The server is the validator: what it refuses is
 * said on the field (or property row) it names.
 */
export function EventDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: CatalogEvent | null; onClose: () => void; onSaved: (e: { name: string }) => void }) {
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<Form, FieldName>(open, () => formOf(editing), [editing]);
  const [propertyError, setPropertyError] = useState<PropertyError | null>(null);
  const base = useId();
  useEffect(() => {
    if (open) setPropertyError(null);
  }, [open, editing]);
  const setProperty = (i: number, patch: Partial<DraftProperty>) => set("properties", form.properties.map((p, k) => (k === i ? { ...p, ...patch } : p)));
  const addProperty = () => {
    const p = emptyProperty();
    set("properties", [...form.properties, p]);
    setTimeout(() => document.getElementById(`${base}-p${p.key}-name`)?.focus(), 0);
  };
  const removeProperty = (i: number) => {
    set(
      "properties",
      form.properties.filter((_, k) => k !== i),
    );
    setPropertyError(null);
    setTimeout(() => document.getElementById(`${base}-add`)?.focus(), 0);
  };

  // A refusal naming a property row goes on that row, not on the list as a whole.
  const splitErrors = (err: unknown) => {
    const split = errorsByField(err, FIELDS);
    const row = propertyErrorOf(split.fields.properties) ?? (err instanceof ApiFailure ? propertyErrorOf(err.detail) : null);
    setPropertyError(row);
    return { fields: row ? { ...split.fields, properties: undefined } : split.fields, general: split.general };
  };
  const save = submit(splitErrors, async () => {
    const properties = form.properties.map((p) => ({ name: p.name.trim(), type: p.type, required: p.required, description: p.description.trim() }));
    const saved = editing
      ? await call(eventApi.api.admin.events({ id: editing.id }).patch({ folder: form.folder.trim(), description: form.description.trim(), properties }))
      : await call(eventApi.api.admin.events.post({ name: form.name.trim(), folder: form.folder.trim() || undefined, description: form.description.trim() || undefined, properties }));
    onSaved(saved);
  });

  const errorId = `${base}-property-error`;
  const invalid = (i: number, field: string) => (propertyError && propertyError.row === i && (propertyError.field ?? "name") === field ? { "aria-invalid": "true" as const, "aria-describedby": errorId } : {});

  return (
    <Dialog open={open} title={editing ? `Edit event ${editing.name}` : "Register event"} onClose={onClose} wide>
      <form onSubmit={save} noValidate>
        {!editing && (
          <NameField error={fieldErrors.name} hint="What SDKs send, e.g. checkout.completed: letters, digits, _ . : or -. A pending event of that name is approved." value={form.name} onInput={(v) => set("name", v)} />
        )}
        <TextField label="Folder" error={fieldErrors.folder} hint="Groups events in lists, e.g. commerce" value={form.folder} onInput={(v) => set("folder", v)} autoComplete="off" />
        <DescriptionField error={fieldErrors.description} value={form.description} onInput={(v) => set("description", v)} />
        <fieldset>
          <legend>Properties</legend>
          {form.properties.length === 0 ? (
            <p class="muted small">No properties: metrics can count this event, sum its value or count its units.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Properties of the event</caption>
              <TableHead columns={["Name", "Type", "Required", "Description"]} actions />
              <tbody>
                {form.properties.map((p, i) => (
                  <tr key={p.key}>
                    <td>
                      <input id={`${base}-p${p.key}-name`} aria-label={`Name of property ${i + 1}`} class="mono" value={p.name} autoComplete="off" spellcheck={false} onInput={(e) => setProperty(i, { name: e.currentTarget.value })} {...invalid(i, "name")} />
                    </td>
                    <td>
                      <select aria-label={`Type of property ${i + 1}`} value={p.type} onChange={(e) => setProperty(i, { type: e.currentTarget.value as PropertyType })} {...invalid(i, "type")}>
                        <Options options={PROPERTY_TYPES.map((t) => ({ value: t, text: t }))} />
                      </select>
                    </td>
                    <td>
                      <input type="checkbox" aria-label={`Property ${i + 1} is required`} checked={p.required} onChange={(e) => setProperty(i, { required: e.currentTarget.checked })} />
                    </td>
                    <td>
                      <input aria-label={`Description of property ${i + 1}`} value={p.description} onInput={(e) => setProperty(i, { description: e.currentTarget.value })} {...invalid(i, "description")} />
                    </td>
                    <td>
                      <RemoveButton label={`Remove property ${i + 1}${p.name.trim() ? ` (${p.name.trim()})` : ""}`} onRemove={() => removeProperty(i)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {propertyError && (
            <p class="error" id={errorId} role="alert">
              Property {propertyError.row + 1}
              {propertyError.field ? `, ${propertyError.field}` : ""}: {propertyError.message}
            </p>
          )}
          <ErrorMessage error={fieldErrors.properties} />
          <button type="button" class="secondary small" id={`${base}-add`} onClick={addProperty}>
            Add property
          </button>
        </fieldset>
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save event" : "Register event"} disabled={busy} />
      </form>
    </Dialog>
  );
}
