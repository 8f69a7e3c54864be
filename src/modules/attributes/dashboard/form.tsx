import { useEffect, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { Dialog, Field, FormActions, focusFirstInvalid } from "../../../web/dashboard/ui";
import { ATTRIBUTE_TYPES, type Attribute, type AttributeType, TYPE_LABELS, attributeApi, errorsByField, splitList } from "./client";

const FIELDS = ["name", "type", "enumValues", "description", "sdkPath"] as const;
type FieldName = (typeof FIELDS)[number];

type Form = { name: string; type: AttributeType; enumValues: string; required: boolean; description: string; sdkPath: string };

const EMPTY: Form = { name: "", type: "string", enumValues: "", required: false, description: "", sdkPath: "" };

function formOf(a: Attribute): Form {
  return {
    name: a.name,
    type: (ATTRIBUTE_TYPES as readonly string[]).includes(a.type) ? (a.type as AttributeType) : "string",
    enumValues: (a.enumValues ?? []).join(", "),
    required: a.required === 1,
    description: a.description ?? "",
    sdkPath: a.sdkPath ?? "",
  };
}

/**
 * Declare an attribute (`editing` null) or edit one (every field but its
 * name). The server is the validator: what it refuses is said on the field
 * it names, anything else in an alert above the buttons.
 */
export function AttributeDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Attribute | null; onClose: () => void; onSaved: (a: Attribute) => void }) {
  const [form, setForm] = useState<Form>(EMPTY);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Each opening starts from the attribute edited (or blank).
  useEffect(() => {
    if (!open) return;
    setForm(editing ? formOf(editing) : EMPTY);
    setFieldErrors({});
    setError(null);
  }, [open, editing]);

  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));
  const isEnum = form.type === "enum";

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const description = form.description.trim();
    const sdkPath = form.sdkPath.trim();
    try {
      const saved = editing
        ? await call(
            attributeApi.api.admin.attributes({ id: editing.id }).patch({
              type: form.type,
              // Leaving enum drops the values (the server refuses values on other types).
              enumValues: isEnum ? splitList(form.enumValues) : null,
              required: form.required,
              description: description || null,
              sdkPath: sdkPath || null,
            }),
          )
        : await call(
            attributeApi.api.admin.attributes.post({
              name: form.name.trim(),
              type: form.type,
              enumValues: isEnum ? splitList(form.enumValues) : undefined,
              required: form.required,
              description: description || undefined,
              sdkPath: sdkPath || undefined,
            }),
          );
      onSaved(saved);
    } catch (err) {
      // The enum values' field is only there for an enum: otherwise its error goes in the alert.
      const split = errorsByField(err, isEnum ? FIELDS : FIELDS.filter((f) => f !== "enumValues"));
      setFieldErrors(split.fields);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={open} title={editing ? `Edit attribute ${editing.name}` : "Declare attribute"} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        {!editing && (
          <Field label="Name" error={fieldErrors.name} hint="The context key, e.g. plan or account.country: letters, digits, _ . : $ or -.">
            {(attrs) => <input {...attrs} required value={form.name} onInput={(e) => set("name", e.currentTarget.value)} autoComplete="off" />}
          </Field>
        )}
        <Field label="Type" error={fieldErrors.type}>
          {(attrs) => (
            <select {...attrs} value={form.type} onChange={(e) => set("type", e.currentTarget.value as AttributeType)}>
              {ATTRIBUTE_TYPES.map((t) => (
                <option key={t} value={t}>
                  {TYPE_LABELS[t]}
                </option>
              ))}
            </select>
          )}
        </Field>
        {isEnum && (
          <Field label="Enum values" error={fieldErrors.enumValues} hint="Comma-separated, e.g. free, pro, enterprise">
            {(attrs) => <input {...attrs} required value={form.enumValues} onInput={(e) => set("enumValues", e.currentTarget.value)} autoComplete="off" />}
          </Field>
        )}
        <label class="check">
          <input type="checkbox" checked={form.required} onChange={(e) => set("required", e.currentTarget.checked)} /> Required: every evaluation context should carry it
        </label>
        <Field label="Description" error={fieldErrors.description}>
          {(attrs) => <input {...attrs} value={form.description} onInput={(e) => set("description", e.currentTarget.value)} />}
        </Field>
        <Field label="SDK path" error={fieldErrors.sdkPath} hint="Where the SDK reads it from, e.g. user.email">
          {(attrs) => <input {...attrs} class="mono" value={form.sdkPath} onInput={(e) => set("sdkPath", e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save attribute" : "Declare attribute"} disabled={busy} />
      </form>
    </Dialog>
  );
}
