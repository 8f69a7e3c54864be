import { useId } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { DescriptionField, NameField, Options, RemoveButton, SelectField, TableHead, optionsOf, useDialogForm, DeleteDialog } from "../../../web/dashboard/form-kit";
import { Dialog, ErrorMessage, Field, FormActions, Link, Loading, errorsByPath, useLoad } from "../../../web/dashboard/ui";
import { type CatalogEvent, loadCatalog } from "../../events/dashboard/client";
import {
  type DraftFilter,
  type DraftPart,
  FILTER_OPS,
  type FilterOp,
  KINDS,
  KIND_LABELS,
  type Kind,
  type Metric,
  type MetricForm,
  OP_LABELS,
  PART_KINDS,
  type PartKind,
  emptyFilter,
  METRIC_FIELDS,
  formOf,
  metricApi,
  partBody,
} from "./client";

type Invalid = { "aria-invalid"?: "true"; "aria-describedby"?: string };

/**
 * Define a metric (`editing` null) or edit one: name, description, kind;
 * a count, sum or unique measures one catalogued event (a sum a numeric
 * property or the event's value), narrowed by filters; a ratio has a
 * numerator and a denominator, each such a measure. What the server refuses
 * is said on the control whose path it names (`numerator.filters.0.value`).
 */
export function MetricDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Metric | null; onClose: () => void; onSaved: (m: Metric) => void }) {
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<MetricForm, string>(open, () => formOf(editing), [editing]);
  // Refusals by path (`numerator.filters.0.value`), as the part editors look them up.
  const errors = new Map(Object.entries(fieldErrors) as [string, string][]);
  // The catalog, read at each opening (someone may have registered an event since).
  const catalog = useLoad(() => (open ? loadCatalog() : Promise.resolve(undefined)), [open]);
  const types = (event: string) => new Map((catalog.data?.find((e) => e.name === event)?.properties ?? []).map((p) => [p.name, p.type]));

  const splitErrors = (err: unknown) => {
    const split = errorsByPath(err, METRIC_FIELDS, { withMessage: false });
    return { fields: Object.fromEntries(split.paths), general: split.general };
  };
  const save = submit(splitErrors, async () => {
    const ratio = form.kind === "ratio";
    const part = (p: DraftPart) => ({ kind: p.kind, ...partBody(p, p.kind, types) });
    const definition = ratio
      ? { event: null, property: null, filters: null, numerator: part(form.numerator), denominator: part(form.denominator) }
      : { ...partBody(form.main, form.kind as PartKind, types), numerator: null, denominator: null };
    const description = form.description.trim() || null;
    const saved = editing
      ? await call(metricApi.api.admin.metrics({ id: editing.id }).patch({ name: form.name.trim(), description, kind: form.kind, ...definition }))
      : await call(metricApi.api.admin.metrics.post({ name: form.name.trim(), description, kind: form.kind, ...definition }));
    onSaved(saved);
  });

  const partEditor = (which: "main" | "numerator" | "denominator") => (
    <PartEditor
      part={form[which]}
      kind={which === "main" ? (form.kind as PartKind) : null}
      where={which === "main" ? "" : which}
      catalog={catalog.data}
      errors={errors}
      onChange={(p) => set(which, p)}
    />
  );

  return (
    <Dialog open={open} title={editing ? `Edit metric ${editing.name}` : "New metric"} onClose={onClose} wide>
      <form onSubmit={save} noValidate>
        <NameField error={errors.get("name")} hint="Unique in the project, e.g. checkout-conversion; alert rules and the API name it." value={form.name} onInput={(v) => set("name", v)} />
        <DescriptionField error={errors.get("description")} value={form.description} onInput={(v) => set("description", v)} />
        <SelectField label="Kind" error={errors.get("kind")} value={form.kind} onChange={(v: Kind) => set("kind", v)} options={optionsOf(KINDS, KIND_LABELS)} />
        {catalog.error && <ErrorMessage error={`The event catalog could not be loaded: ${catalog.error}`} />}
        {/* The selects wait for their options: a value set before its option exists would show as none. */}
        {!catalog.data && !catalog.error ? (
          <Loading />
        ) : form.kind === "ratio" ? (
          <>
            <fieldset>
              <legend>Numerator</legend>
              {partEditor("numerator")}
            </fieldset>
            <fieldset>
              <legend>Denominator</legend>
              <p class="hint">A bucket where the denominator is 0 gives 0.</p>
              {partEditor("denominator")}
            </fieldset>
          </>
        ) : (
          partEditor("main")
        )}
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save metric" : "Create metric"} disabled={busy} />
      </form>
    </Dialog>
  );
}

/**
 * One measure: its kind (a ratio's parts only), event, summed property and
 * filters. `where` is "" or "numerator"/"denominator": in every label ("Event
 * of the numerator") and in the paths of the server's refusals.
 */
function PartEditor(props: { part: DraftPart; kind: PartKind | null; where: string; catalog: CatalogEvent[] | undefined; errors: Map<string, string>; onChange: (p: DraftPart) => void }) {
  const { part, where, catalog, errors, onChange } = props;
  const base = useId();
  const kind = props.kind ?? part.kind;
  const of = where ? ` of the ${where}` : "";
  const path = (name: string) => (where ? `${where}.${name}` : name);
  const event = catalog?.find((e) => e.name === part.event);
  const properties = event?.properties ?? [];
  const set = (patch: Partial<DraftPart>) => onChange({ ...part, ...patch });
  const setFilter = (i: number, patch: Partial<DraftFilter>) => set({ filters: part.filters.map((f, k) => (k === i ? { ...f, ...patch } : f)) });
  const addFilter = () => {
    const f = emptyFilter();
    set({ filters: [...part.filters, f] });
    setTimeout(() => document.getElementById(`${base}-f${f.key}`)?.focus(), 0);
  };
  const removeFilter = (i: number) => {
    set({ filters: part.filters.filter((_, k) => k !== i) });
    setTimeout(() => document.getElementById(`${base}-add`)?.focus(), 0);
  };
  // A row's errors are listed under the table; each control they name points at its message.
  const rowErrors = part.filters.flatMap((_, i) =>
    ["property", "op", "value", ""].flatMap((field) => {
      const key = path(field ? `filters.${i}.${field}` : `filters.${i}`);
      const message = errors.get(key);
      return message ? [{ key, id: `${base}-e-${i}-${field}`, text: `Filter ${i + 1}${field ? `, ${field === "op" ? "operator" : field}` : ""}: ${message}` }] : [];
    }),
  );
  const invalid = (i: number, field: string): Invalid => {
    const hit = rowErrors.find((r) => r.key === path(`filters.${i}.${field}`)) ?? rowErrors.find((r) => r.key === path(`filters.${i}`));
    return hit ? { "aria-invalid": "true", "aria-describedby": hit.id } : {};
  };
  const propertyOption = (name: string, known: boolean) => (
    <option key={name} value={name}>
      {known ? name : `${name} (not in the catalog)`}
    </option>
  );

  return (
    <>
      {props.kind === null && (
        <Field label={`Kind${of}`} error={errors.get(path("kind"))}>
          {(attrs) => (
            <select {...attrs} value={part.kind} onChange={(e) => set({ kind: e.currentTarget.value as PartKind })}>
              <Options options={PART_KINDS.map((k) => ({ value: k, text: KIND_LABELS[k] }))} />
            </select>
          )}
        </Field>
      )}
      <Field label={`Event${of}`} error={errors.get(path("event"))} hint={event?.pending === 1 ? "Pending: ingest found it and nobody approved it yet." : undefined}>
        {(attrs) => (
          <select {...attrs} value={part.event} onChange={(e) => set({ event: e.currentTarget.value, property: "" })}>
            <option value="">Choose an event</option>
            {catalog?.map((e) => (
              <option key={e.id} value={e.name}>
                {e.name}
                {e.pending === 1 ? " (pending)" : ""}
              </option>
            ))}
            {part.event && catalog && !event && <option value={part.event}>{part.event} (not in the catalog)</option>}
          </select>
        )}
      </Field>
      {kind === "sum" && (
        <Field label={`Summed property${of}`} error={errors.get(path("property"))} hint="A number property of the event; none adds up the event's value.">
          {(attrs) => (
            <select {...attrs} value={part.property} onChange={(e) => set({ property: e.currentTarget.value })}>
              <option value="">The event's value</option>
              {properties.filter((p) => p.type === "number").map((p) => propertyOption(p.name, true))}
              {part.property && !properties.some((p) => p.name === part.property && p.type === "number") && propertyOption(part.property, false)}
            </select>
          )}
        </Field>
      )}
      <p class="field-label">Filters{of}</p>
      {part.filters.length === 0 ? (
        <p class="muted small">No filters: every {part.event || "event"} counts.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Filters{of}: all must hold</caption>
          <TableHead columns={["Property", "Operator", "Value"]} actions />
          <tbody>
            {part.filters.map((f, i) => {
              const type = properties.find((p) => p.name === f.property)?.type;
              const label = (what: string) => `${what} of filter ${i + 1}${of}`;
              return (
                <tr key={f.key}>
                  <td>
                    <select id={`${base}-f${f.key}`} aria-label={label("Property")} value={f.property} onChange={(e) => setFilter(i, { property: e.currentTarget.value })} {...invalid(i, "property")}>
                      <option value="">Choose a property</option>
                      {properties.map((p) => propertyOption(p.name, true))}
                      {f.property && !properties.some((p) => p.name === f.property) && propertyOption(f.property, false)}
                    </select>
                  </td>
                  <td>
                    <select aria-label={label("Operator")} value={f.op} onChange={(e) => setFilter(i, { op: e.currentTarget.value as FilterOp })} {...invalid(i, "op")}>
                      <Options options={FILTER_OPS.map((op) => ({ value: op, text: OP_LABELS[op] }))} />
                    </select>
                  </td>
                  <td>
                    {type === "boolean" ? (
                      <select aria-label={label("Value")} value={f.text} onChange={(e) => setFilter(i, { text: e.currentTarget.value })} {...invalid(i, "value")}>
                        <option value="">Choose</option>
                        <option value="true">true</option>
                        <option value="false">false</option>
                      </select>
                    ) : type === "number" ? (
                      <input aria-label={label("Value")} type="number" step="any" value={f.text} onInput={(e) => setFilter(i, { text: e.currentTarget.value })} {...invalid(i, "value")} />
                    ) : (
                      <input aria-label={label("Value")} value={f.text} autoComplete="off" onInput={(e) => setFilter(i, { text: e.currentTarget.value })} {...invalid(i, "value")} />
                    )}
                  </td>
                  <td>
                    <RemoveButton label={`Remove filter ${i + 1}${of}`} onRemove={() => removeFilter(i)} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {rowErrors.map((r) => (
        <p key={r.key} class="error" id={r.id} role="alert">
          {r.text}
        </p>
      ))}
      <ErrorMessage error={errors.get(path("filters"))} />
      <button type="button" class="secondary small" id={`${base}-add`} aria-label={`Add filter${where ? ` to the ${where}` : ""}`} onClick={addFilter} disabled={!part.event}>
        Add filter
      </button>
    </>
  );
}

/** Asks before deleting; a metric alert rules use is refused by the server, saying which (shown in the dialog). */
export function DeleteMetricDialog({ metric, onClose, onDeleted }: { metric: Metric | null; onClose: () => void; onDeleted: (m: Metric) => Promise<void> | void }) {
  return (
    <DeleteDialog
      item={metric}
      what="metric"
      message={
        <p>
          Its definition goes; the events it measured stay. A metric an <Link href="/alerts">alert rule</Link> watches cannot be deleted until those rules are.
        </p>
      }
      remove={(gone) => call(metricApi.api.admin.metrics({ id: gone.id }).delete())}
      onClose={onClose}
      onDeleted={onDeleted}
    />
  );
}
