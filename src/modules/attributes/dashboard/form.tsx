import { call } from "../../../web/dashboard/api";
import { CheckField, DescriptionField, NameField, SelectField, TextField, optionsOf, useDialogForm } from "../../../web/dashboard/form-kit";
import { Dialog, FormActions } from "../../../web/dashboard/ui";
import { ATTRIBUTE_TYPES, type Attribute, type AttributeType, TYPE_LABELS, attributeApi, splitList } from "./client";

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
  // Each opening starts from the attribute edited (or blank).
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<Form, FieldName>(open, () => (editing ? formOf(editing) : EMPTY), [editing]);
  const isEnum = form.type === "enum";

  // The enum values' field is only there for an enum: otherwise its error goes in the alert.
  const save = submit(isEnum ? FIELDS : FIELDS.filter((f) => f !== "enumValues"), async () => {
    const description = form.description.trim();
    const sdkPath = form.sdkPath.trim();
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
  });

  return (
    <Dialog open={open} title={editing ? `Edit attribute ${editing.name}` : "Declare attribute"} onClose={onClose}>
      <form onSubmit={save} noValidate>
        {!editing && <NameField error={fieldErrors.name} hint="The context key, e.g. plan or account.country: letters, digits, _ . : $ or -." value={form.name} onInput={(v) => set("name", v)} />}
        <SelectField label="Type" error={fieldErrors.type} value={form.type} onChange={(v: AttributeType) => set("type", v)} options={optionsOf(ATTRIBUTE_TYPES, TYPE_LABELS)} />
        {isEnum && <TextField label="Enum values" error={fieldErrors.enumValues} hint="Comma-separated, e.g. free, pro, enterprise" required value={form.enumValues} onInput={(v) => set("enumValues", v)} autoComplete="off" />}
        <CheckField checked={form.required} onChange={(v) => set("required", v)}>
          Required: every evaluation context should carry it
        </CheckField>
        <DescriptionField error={fieldErrors.description} value={form.description} onInput={(v) => set("description", v)} />
        <TextField label="SDK path" error={fieldErrors.sdkPath} hint="Where the SDK reads it from, e.g. user.email" class="mono" value={form.sdkPath} onInput={(v) => set("sdkPath", v)} autoComplete="off" />
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save attribute" : "Declare attribute"} disabled={busy} />
      </form>
    </Dialog>
  );
}
