import { call } from "../../../web/dashboard/api";
import { CheckField, NameField, SelectField, optionsOf, useDialogForm, DeleteDialog } from "../../../web/dashboard/form-kit";
import { Dialog, Field, FormActions, Link } from "../../../web/dashboard/ui";
import { SEGMENTS, UNIT_TYPES, UNIT_TYPE_LABELS, type UnitType, type Universe, drawable, universeApi } from "./client";
import { SegmentBar } from "./segments";

// errorsByField keys a detail by its leading letters: `holdout_range: …` is `holdout`, `unit_type: …` is `unit`.
const FIELDS = ["name", "unit", "holdout"] as const;
type FieldName = (typeof FIELDS)[number];

type Form = { name: string; unitType: UnitType; holdout: boolean; start: string; end: string };

const EMPTY: Form = { name: "", unitType: "user_id", holdout: false, start: "0", end: "500" };

function formOf(u: Universe): Form {
  const range = u.holdout_range;
  return {
    name: u.name,
    unitType: (UNIT_TYPES as readonly string[]).includes(u.unit_type) ? (u.unit_type as UnitType) : "user_id",
    holdout: range !== null,
    start: String(range?.[0] ?? 0),
    end: String(range?.[1] ?? 500),
  };
}

/** The typed bounds as numbers (anything else goes as typed, NaN, for the server to refuse by name: JSON sends it as null). */
const bound = (text: string) => (text.trim() === "" ? Number.NaN : Number(text));

/** The holdout the form would send: null without one. */
function holdoutOf(form: Form): number[] | null {
  return form.holdout ? [bound(form.start), bound(form.end)] : null;
}

/**
 * Create a universe (`editing` null) or edit one: its name and holdout (a
 * range of segments given to no experiment). The unit type is chosen once,
 * at creation. The bar previews the holdout as it is typed; what the server
 * refuses (a name taken, a range out of bounds, a plan below pro) is said on
 * the field it names.
 */
export function UniverseDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Universe | null; onClose: () => void; onSaved: (u: { id: string; name: string }) => void }) {
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<Form, FieldName>(open, () => (editing ? formOf(editing) : EMPTY), [editing]);
  const preview = holdoutOf(form);
  const previewable = preview === null || drawable(preview);

  const save = submit(form.holdout ? FIELDS : FIELDS.filter((f) => f !== "holdout"), async () => {
    // A bound that is not a number travels as null: the server names the field.
    const holdout_range = holdoutOf(form)?.map((n) => (Number.isFinite(n) ? n : (null as unknown as number))) ?? null;
    // An edit sends what changed only: a holdout left as it was is not set again (a project whose plan went below pro keeps it).
    const changed = editing && {
      ...(form.name.trim() !== editing.name ? { name: form.name.trim() } : {}),
      ...(JSON.stringify(holdout_range) !== JSON.stringify(editing.holdout_range) ? { holdout_range } : {}),
    };
    const saved = editing
      ? await call(universeApi.api.admin.universes({ id: editing.id }).patch(changed!))
      : await call(universeApi.api.admin.universes.post({ name: form.name.trim(), unit_type: form.unitType, ...(holdout_range ? { holdout_range } : {}) }));
    onSaved(saved);
  });

  return (
    <Dialog open={open} title={editing ? `Edit universe ${editing.name}` : "New universe"} onClose={onClose}>
      <form onSubmit={save} noValidate>
        <NameField error={fieldErrors.name} hint="Unique in the project, e.g. web-users; experiments and the API name it." value={form.name} onInput={(v) => set("name", v)} />
        {editing ? (
          <p>
            Unit type: <span class="mono">{editing.unit_type}</span>
            <span class="muted"> (fixed: another would move every unit to another segment)</span>
          </p>
        ) : (
          <SelectField label="Unit type" error={fieldErrors.unit} hint="What identifies a unit; it cannot change later." value={form.unitType} onChange={(v: UnitType) => set("unitType", v)} options={optionsOf(UNIT_TYPES, UNIT_TYPE_LABELS)} />
        )}
        <fieldset>
          <legend>Holdout</legend>
          <CheckField checked={form.holdout} onChange={(v) => set("holdout", v)}>
            Hold out a range of segments from every experiment (plan pro or above)
          </CheckField>
          {form.holdout && (
            <>
              <Field label="First held-out segment" error={fieldErrors.holdout} hint={`0 to ${SEGMENTS - 1}`}>
                {(attrs) => <input {...attrs} type="number" inputMode="numeric" min={0} max={SEGMENTS - 1} step={1} value={form.start} onInput={(e) => set("start", e.currentTarget.value)} />}
              </Field>
              <Field label="End of the holdout (excluded)" hint={`1 to ${SEGMENTS}: segments up to this one, not including it`}>
                {(attrs) => (
                  <input {...attrs} aria-invalid={fieldErrors.holdout ? "true" : undefined} type="number" inputMode="numeric" min={1} max={SEGMENTS} step={1} value={form.end} onInput={(e) => set("end", e.currentTarget.value)} />
                )}
              </Field>
            </>
          )}
          {previewable ? <SegmentBar range={preview} label="Preview" caption /> : <p class="hint">The preview shows once the range is whole segments with start below end, within 0 to {SEGMENTS}.</p>}
        </fieldset>
        {editing && (
          <p class="hint">
            Salt <span class="mono">{editing.salt}</span>: fixed for the universe's life, so every unit keeps its segment.
          </p>
        )}
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save universe" : "Create universe"} disabled={busy} />
      </form>
    </Dialog>
  );
}

export function DeleteUniverseDialog({ universe, onClose, onDeleted }: { universe: Universe | null; onClose: () => void; onDeleted: (u: Universe) => Promise<void> | void }) {
  return (
    <DeleteDialog
      item={universe}
      what="universe"
      message={
        <p>
          Experiments can no longer be created in it. A universe with a running experiment cannot be deleted until the experiment stops. See also the{" "}
          <Link href="/audit">audit trail</Link>.
        </p>
      }
      remove={(gone) => call(universeApi.api.admin.universes({ id: gone.id }).delete())}
      onClose={onClose}
      onDeleted={onDeleted}
    />
  );
}
