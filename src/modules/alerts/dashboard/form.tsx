import { call } from "../../../web/dashboard/api";
import { CheckField, NameField, SelectField, optionsOf, useDialogForm } from "../../../web/dashboard/form-kit";
import { Dialog, Field, FormActions } from "../../../web/dashboard/ui";
import type { Metric } from "../../metrics/dashboard/client";
import { type AlertRule, COMPARATORS, COMPARATOR_LABELS, type Comparator, alertApi } from "./client";

const FIELDS = ["name", "metricId", "comparator", "threshold", "windowHours", "notify"] as const;
type FieldName = (typeof FIELDS)[number];
type Form = { name: string; metricId: string; comparator: Comparator; threshold: string; windowHours: string; enabled: boolean; webhookUrl: string };

function formOf(r: AlertRule | null): Form {
  if (!r) return { name: "", metricId: "", comparator: "gt", threshold: "", windowHours: "1", enabled: true, webhookUrl: "" };
  return {
    name: r.name,
    metricId: r.metricId,
    comparator: (COMPARATORS as readonly string[]).includes(r.comparator) ? (r.comparator as Comparator) : "gt",
    threshold: String(r.threshold),
    windowHours: String(r.windowHours),
    enabled: r.enabled,
    webhookUrl: r.notify?.webhookUrl ?? "",
  };
}

/** A number as typed; anything else goes as typed, for the server to refuse by name. */
const numeric = (text: string) => (text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text) as number;

/**
 * New alert rule (`editing` null) or edit one: its comparator, threshold,
 * window and whether it is enabled, and where it notifies. A rule's name and
 * metric never change (the API refuses a metricId in an update).
 */
export function AlertRuleDialog(props: { open: boolean; editing: AlertRule | null; metrics: Metric[] | undefined; onClose: () => void; onSaved: (name: string) => void }) {
  const { open, editing, metrics } = props;
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<Form, FieldName>(open, () => formOf(editing), [editing]);

  const save = submit(FIELDS, async () => {
    const webhookUrl = form.webhookUrl.trim();
    const fields = { comparator: form.comparator, threshold: numeric(form.threshold), windowHours: numeric(form.windowHours), enabled: form.enabled };
    if (editing) {
      // Where it notifies is sent only when changed: a connector set through the API stays.
      const notifyChanged = webhookUrl !== (editing.notify?.webhookUrl ?? "");
      await call(alertApi.api.admin["alert-rules"]({ id: editing.id }).patch({ ...fields, ...(notifyChanged ? { notify: webhookUrl ? { webhookUrl } : null } : {}) }));
      props.onSaved(editing.name);
    } else {
      const created = await call(alertApi.api.admin["alert-rules"].post({ name: form.name.trim(), metricId: form.metricId, ...fields, notify: webhookUrl ? { webhookUrl } : null }));
      props.onSaved(created.name);
    }
  });

  const metricName = metrics?.find((m) => m.id === form.metricId)?.name;
  return (
    <Dialog open={open} title={editing ? `Edit alert rule ${editing.name}` : "New alert rule"} onClose={props.onClose}>
      <form onSubmit={save} noValidate>
        {editing ? (
          <p>
            Watches metric <strong>{metricName ?? editing.metricId}</strong>. <span class="muted">A rule's metric never changes: for another metric, create another rule.</span>
          </p>
        ) : (
          <>
            <NameField error={fieldErrors.name} hint="Unique in the project, e.g. checkout-errors-high" value={form.name} onInput={(v) => set("name", v)} />
            <SelectField
              label="Metric"
              error={fieldErrors.metricId}
              hint={metrics && metrics.length === 0 ? "No metrics yet: define one on the Metrics page first." : "Fixed for the rule's life."}
              value={form.metricId}
              onChange={(v) => set("metricId", v)}
              options={(metrics ?? []).map((m) => ({ value: m.id, text: m.name }))}
            >
              <option value="">Choose a metric</option>
            </SelectField>
          </>
        )}
        <SelectField label="Comparator" error={fieldErrors.comparator} value={form.comparator} onChange={(v: Comparator) => set("comparator", v)} options={optionsOf(COMPARATORS, COMPARATOR_LABELS)} />
        <Field label="Threshold" error={fieldErrors.threshold}>
          {(attrs) => <input {...attrs} type="number" step="any" required value={form.threshold} onInput={(e) => set("threshold", e.currentTarget.value)} />}
        </Field>
        <Field label="Window (hours)" error={fieldErrors.windowHours} hint="It fires when the metric's value over this trailing window compares so with the threshold; checked every minute.">
          {(attrs) => <input {...attrs} type="number" min={1} max={720} step={1} value={form.windowHours} onInput={(e) => set("windowHours", e.currentTarget.value)} />}
        </Field>
        <CheckField checked={form.enabled} onChange={(v) => set("enabled", v)}>
          Enabled: evaluate this rule
        </CheckField>
        <Field label="Webhook URL" error={fieldErrors.notify} hint="Optional: stored as the rule's notify target (svc itself does not post to it). Every firing files a queue item, and firing and resolving reach the connectors that listen for alert.firing or alert.resolved (see Connectors).">
          {(attrs) => <input {...attrs} type="url" class="mono" value={form.webhookUrl} onInput={(e) => set("webhookUrl", e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <FormActions error={error} onCancel={props.onClose} submitLabel={editing ? "Save alert rule" : "Create alert rule"} disabled={busy} />
      </form>
    </Dialog>
  );
}
