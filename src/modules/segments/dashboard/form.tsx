import { useMemo, useState } from "preact/hooks";
import { DescriptionField, NameField, SelectField, TextField, useDialogForm } from "../../../web/dashboard/form-kit";
import { Dialog, Field, FormActions, errorsByField } from "../../../web/dashboard/ui";
import { IDS_MAX, readIds } from "../ids-file";
import { type Condition, type Segment, createSegment, idsCount, updateSegment } from "./client";

// errorsByField keys a detail by its leading letters: `ids[3]: …` is `ids`, `conditions[0].op: …` is `conditions`.
const FIELDS = ["name", "description", "attribute", "conditions", "ids"] as const;
type FieldName = (typeof FIELDS)[number];

/** What an import does to the list of a segment that exists (a new one just takes the file's ids). */
type Mode = "add" | "replace" | "remove";
const MODE_OPTIONS = [
  { value: "add" as const, text: "Add them to the list" },
  { value: "replace" as const, text: "Replace the whole list with them" },
  { value: "remove" as const, text: "Remove them from the list" },
];

type Form = { name: string; description: string; attribute: string; conditions: string; mode: Mode };
type Imported = { file: string; text: string };

const EMPTY: Form = { name: "", description: "", attribute: "user_id", conditions: "[]", mode: "add" };

function formOf(s: Segment): Form {
  return { name: s.name, description: s.description, attribute: s.attribute, conditions: JSON.stringify(s.conditions, null, 2), mode: "add" };
}

/** The conditions typed, or why they are not a JSON list. */
function parseConditions(text: string): { conditions: Condition[] } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.trim() === "" ? "[]" : text);
  } catch (err) {
    return { error: `Not valid JSON: ${(err as Error).message}` };
  }
  if (!Array.isArray(parsed)) return { error: 'The conditions are a JSON list, e.g. [{"attr": "email", "op": "ends_with", "value": "@acme.com"}]' };
  return { conditions: parsed as Condition[] };
}

/** A mistake found here, before anything is sent, on the field it concerns. */
class Refusal extends Error {
  constructor(
    readonly field: FieldName,
    message: string,
  ) {
    super(message);
  }
}

/** A refusal on the field it names; the server's addIds / removeIds are the import's. */
function splitErrors(err: unknown): { fields: Partial<Record<FieldName, string>>; general: string | null } {
  if (err instanceof Refusal) return { fields: { [err.field]: err.message }, general: null };
  const split = errorsByField(err, [...FIELDS, "addIds", "removeIds"] as const);
  const { addIds, removeIds, ...fields } = split.fields;
  return { fields: { ...fields, ...(!fields.ids && (addIds || removeIds) ? { ids: addIds ?? removeIds } : {}) } as Partial<Record<FieldName, string>>, general: split.general };
}

/**
 * Create a segment (`editing` null) or change one: name, description, the attribute its ids are matched on,
 * its conditions as JSON, and ids imported from a CSV file (its first column; a header naming the attribute is
 * skipped), read here and sent in parts under the server's body limit. The count of the file's ids shows as soon
 * as it is read; what the server refuses lands on the field it names.
 */
export function SegmentDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Segment | null; onClose: () => void; onSaved: (s: { id: string; name: string }) => void }) {
  const { form, set, fieldErrors, setFieldErrors, error, busy, submit } = useDialogForm<Form, FieldName>(open, () => (editing ? formOf(editing) : EMPTY), [editing]);
  const [imported, setImported] = useState<Imported | null>(null);
  const [fileKey, setFileKey] = useState(0);
  const attribute = form.attribute.trim() || "user_id";
  const read = useMemo(() => (imported ? readIds(imported.text, attribute) : null), [imported, attribute]);

  const close = () => {
    setImported(null);
    setFileKey((k) => k + 1);
    onClose();
  };

  const chooseFile = async (input: HTMLInputElement) => {
    const file = input.files?.[0];
    setFieldErrors({ ...fieldErrors, ids: undefined });
    setImported(file ? { file: file.name, text: await file.text() } : null);
  };

  const save = submit(splitErrors, async () => {
    const parsed = parseConditions(form.conditions);
    if ("error" in parsed) throw new Refusal("conditions", parsed.error);
    if (read && read.ids.length > IDS_MAX) throw new Refusal("ids", `The file holds ${idsCount(read.ids.length)}; a segment holds at most ${idsCount(IDS_MAX)}`);
    const ids = read?.ids ?? [];
    if (!editing) {
      const created = await createSegment({ name: form.name.trim(), description: form.description.trim() || undefined, attribute, conditions: parsed.conditions }, ids);
      setImported(null);
      onSaved(created);
      return;
    }
    // An edit sends what changed only.
    const fields = {
      ...(form.name.trim() !== editing.name ? { name: form.name.trim() } : {}),
      ...(form.description.trim() !== editing.description ? { description: form.description.trim() } : {}),
      ...(attribute !== editing.attribute ? { attribute } : {}),
      ...(JSON.stringify(parsed.conditions) !== JSON.stringify(editing.conditions) ? { conditions: parsed.conditions } : {}),
    };
    const change = !read ? {} : form.mode === "replace" ? { replace: ids } : form.mode === "remove" ? { remove: ids } : { add: ids };
    const saved = await updateSegment(editing, fields, change);
    setImported(null);
    onSaved(saved);
  });

  const tooMany = read !== null && read.ids.length > IDS_MAX;
  return (
    <Dialog open={open} title={editing ? `Edit segment ${editing.name}` : "New segment"} onClose={close} wide>
      <form onSubmit={save} noValidate>
        <NameField error={fieldErrors.name} hint="Unique in the project, e.g. beta-testers; gate rules name it." value={form.name} onInput={(v) => set("name", v)} />
        <DescriptionField error={fieldErrors.description} value={form.description} onInput={(v) => set("description", v)} />
        <TextField
          label="Attribute"
          error={fieldErrors.attribute}
          hint="The context attribute the ids are matched on, e.g. user_id or account_id."
          value={form.attribute}
          onInput={(v) => set("attribute", v)}
          autoComplete="off"
          class="mono"
        />
        <Field label="Conditions (JSON)" error={fieldErrors.conditions} hint='A unit is also in the segment when all of these hold: a list of {"attr", "op", "value"} as in gate rules; [] for none.'>
          {(attrs) => <textarea {...attrs} class="editor mono" rows={5} spellcheck={false} value={form.conditions} onInput={(e) => set("conditions", e.currentTarget.value)} />}
        </Field>
        <fieldset>
          <legend>Ids</legend>
          {editing && <p>The list holds {idsCount(editing.idCount)}.</p>}
          <Field
            label="Import ids from a CSV file"
            error={fieldErrors.ids}
            hint={`The first column, or one id per line; a first line that reads ${attribute} is a header and skipped. Up to ${idsCount(IDS_MAX)}.`}
          >
            {(attrs) => <input key={fileKey} {...attrs} type="file" accept=".csv,.txt,text/csv,text/plain" onChange={(e) => void chooseFile(e.currentTarget)} />}
          </Field>
          <p class={tooMany ? "error" : "hint"} aria-live="polite">
            {read ? `${idsCount(read.ids.length)} in ${imported!.file}${read.header ? ` (header ${attribute} skipped)` : ""}${tooMany ? `: more than ${idsCount(IDS_MAX)}` : ""}` : "No file chosen."}
          </p>
          {editing && read && <SelectField label="What the file's ids do" value={form.mode} onChange={(v: Mode) => set("mode", v)} options={MODE_OPTIONS} />}
        </fieldset>
        <FormActions error={error} onCancel={close} submitLabel={busy ? "Saving…" : editing ? "Save segment" : "Create segment"} disabled={busy || tooMany} />
      </form>
    </Dialog>
  );
}
