import { call } from "../../../web/dashboard/api";
import { SelectField, TextAreaField, TextField, optionsOf, useDialogForm } from "../../../web/dashboard/form-kit";
import { Dialog, FormActions } from "../../../web/dashboard/ui";
import { PRIORITIES, PRIORITY_LABELS, type Priority, type QueueItem, opsApi } from "./client";

const FIELDS = ["type", "title", "priority", "stepsToReproduce", "actualResult", "expectedResult", "useCase"] as const;
type FieldName = (typeof FIELDS)[number];
type Form = { type: "bug" | "feature_request"; title: string; priority: Priority; stepsToReproduce: string; actualResult: string; expectedResult: string; useCase: string };

const EMPTY: Form = { type: "bug", title: "", priority: "medium", stepsToReproduce: "", actualResult: "", expectedResult: "", useCase: "" };

function formOf(i: QueueItem): Form {
  return {
    type: i.type === "feature_request" ? "feature_request" : "bug",
    title: i.title,
    priority: i.priority,
    stepsToReproduce: i.stepsToReproduce ?? "",
    actualResult: i.actualResult ?? "",
    expectedResult: i.expectedResult ?? "",
    useCase: i.useCase ?? "",
  };
}

const TEXTS: { key: "stepsToReproduce" | "actualResult" | "expectedResult" | "useCase"; label: string; hint: string }[] = [
  { key: "stepsToReproduce", label: "Steps to reproduce", hint: "One step per line" },
  { key: "actualResult", label: "Actual result", hint: "What happens" },
  { key: "expectedResult", label: "Expected result", hint: "What should happen" },
  { key: "useCase", label: "Use case", hint: "Why it is wanted (feature requests)" },
];

/**
 * File an item (`editing` null: a bug or a feature request, open at once) or
 * edit one: title, priority and the text fields (a cleared field is
 * removed). The server's refusals land on the field they name.
 */
export function ItemDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: QueueItem | null; onClose: () => void; onSaved: (saved: { id: string; number: number }) => void }) {
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<Form, FieldName>(open, () => (editing ? formOf(editing) : EMPTY), [editing]);
  const text = (value: string) => (value.trim() === "" ? null : value);

  const save = submit(FIELDS, async () => {
    if (editing) {
      const before = formOf(editing);
      const patch: Record<string, string | null> = {};
      if (form.title !== before.title) patch.title = form.title;
      if (form.priority !== before.priority) patch.priority = form.priority;
      for (const { key } of TEXTS) if (form[key] !== before[key]) patch[key] = text(form[key]);
      const saved = await call(opsApi.api.admin.ops({ id: editing.id }).patch(patch as never));
      onSaved(saved);
    } else {
      const body = {
        type: form.type,
        title: form.title,
        priority: form.priority,
        ...(text(form.stepsToReproduce) ? { stepsToReproduce: form.stepsToReproduce } : {}),
        ...(text(form.actualResult) ? { actualResult: form.actualResult } : {}),
        ...(text(form.expectedResult) ? { expectedResult: form.expectedResult } : {}),
      };
      onSaved(await call(opsApi.api.admin.ops.post(body)));
    }
  });

  // A new item takes no use case through the admin API (the public intake's feature requests carry one); an edit may set it.
  const texts = editing ? TEXTS : TEXTS.filter((t) => t.key !== "useCase");
  return (
    <Dialog open={open} title={editing ? `Edit #${editing.number}` : "New item"} onClose={onClose} wide>
      <form onSubmit={save} noValidate>
        {!editing && (
          <SelectField
            label="Type"
            error={fieldErrors.type}
            hint="Error and alert items are filed by svc itself."
            value={form.type}
            onChange={(v) => set("type", v)}
            options={[
              { value: "bug", text: "Bug" },
              { value: "feature_request", text: "Feature request" },
            ]}
          />
        )}
        <TextField label="Title" error={fieldErrors.title} hint="One line, up to 200 characters." required value={form.title} onInput={(v) => set("title", v)} autoComplete="off" />
        <SelectField label="Priority" error={fieldErrors.priority} value={form.priority} onChange={(v: Priority) => set("priority", v)} options={optionsOf(PRIORITIES, PRIORITY_LABELS)} />
        {texts.map((t) => (
          <TextAreaField key={t.key} label={t.label} error={fieldErrors[t.key]} hint={t.hint} rows={3} value={form[t.key]} onInput={(v) => set(t.key, v)} />
        ))}
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save item" : "File item"} disabled={busy} />
      </form>
    </Dialog>
  );
}
