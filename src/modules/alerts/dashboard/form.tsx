import { useEffect, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { Dialog, Field, FormActions, errorsByField, focusFirstInvalid } from "../../../web/dashboard/ui";
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
  const [form, setForm] = useState<Form>(formOf(null));
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!open) return;
    setForm(formOf(editing));
    setFieldErrors({});
    setError(null);
  }, [open, editing]);
  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const webhookUrl = form.webhookUrl.trim();
    const fields = { comparator: form.comparator, threshold: numeric(form.threshold), windowHours: numeric(form.windowHours), enabled: form.enabled };
    try {
      if (editing) {
        // Where it notifies is sent only when changed: a connector set through the API stays.
        const notifyChanged = webhookUrl !== (editing.notify?.webhookUrl ?? "");
        await call(alertApi.api.admin["alert-rules"]({ id: editing.id }).patch({ ...fields, ...(notifyChanged ? { notify: webhookUrl ? { webhookUrl } : null } : {}) }));
        props.onSaved(editing.name);
      } else {
        const created = await call(alertApi.api.admin["alert-rules"].post({ name: form.name.trim(), metricId: form.metricId, ...fields, notify: webhookUrl ? { webhookUrl } : null }));
        props.onSaved(created.name);
      }
    } catch (err) {
      const split = errorsByField(err, FIELDS);
      setFieldErrors(split.fields);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  const metricName = metrics?.find((m) => m.id === form.metricId)?.name;
  return (
    <Dialog open={open} title={editing ? `Edit alert rule ${editing.name}` : "New alert rule"} onClose={props.onClose}>
      <form onSubmit={submit} noValidate>
        {editing ? (
          <p>
            Watches metric <strong>{metricName ?? editing.metricId}</strong>. <span class="muted">A rule's metric never changes: for another metric, create another rule.</span>
          </p>
        ) : (
          <>
            <Field label="Name" error={fieldErrors.name} hint="Unique in the project, e.g. checkout-errors-high">
              {(attrs) => <input {...attrs} required value={form.name} onInput={(e) => set("name", e.currentTarget.value)} autoComplete="off" />}
            </Field>
            <Field label="Metric" error={fieldErrors.metricId} hint={metrics && metrics.length === 0 ? "No metrics yet: define one on the Metrics page first." : "Fixed for the rule's life."}>
              {(attrs) => (
                <select {...attrs} value={form.metricId} onChange={(e) => set("metricId", e.currentTarget.value)}>
                  <option value="">Choose a metric</option>
                  {metrics?.map((m) => (
                    <option key={m.id} value={m.id}>
                      {m.name}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </>
        )}
        <Field label="Comparator" error={fieldErrors.comparator}>
          {(attrs) => (
            <select {...attrs} value={form.comparator} onChange={(e) => set("comparator", e.currentTarget.value as Comparator)}>
              {COMPARATORS.map((c) => (
                <option key={c} value={c}>
                  {COMPARATOR_LABELS[c]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Threshold" error={fieldErrors.threshold}>
          {(attrs) => <input {...attrs} type="number" step="any" required value={form.threshold} onInput={(e) => set("threshold", e.currentTarget.value)} />}
        </Field>
        <Field label="Window (hours)" error={fieldErrors.windowHours} hint="It fires when the metric's value over this trailing window compares so with the threshold; checked every minute.">
          {(attrs) => <input {...attrs} type="number" min={1} max={720} step={1} value={form.windowHours} onInput={(e) => set("windowHours", e.currentTarget.value)} />}
        </Field>
        <label class="check">
          <input type="checkbox" checked={form.enabled} onChange={(e) => set("enabled", e.currentTarget.checked)} /> Enabled: evaluate this rule
        </label>
        <Field label="Webhook URL" error={fieldErrors.notify} hint="Optional: stored as the rule's notify target (svc itself does not post to it). Every firing files a queue item, and firing and resolving reach the connectors that listen for alert.firing or alert.resolved (see Connectors).">
          {(attrs) => <input {...attrs} type="url" class="mono" value={form.webhookUrl} onInput={(e) => set("webhookUrl", e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <FormActions error={error} onCancel={props.onClose} submitLabel={editing ? "Save alert rule" : "Create alert rule"} disabled={busy} />
      </form>
    </Dialog>
  );
}
