import { useEffect, useState } from "preact/hooks";
import { apiOf, call, describeError } from "../../../web/dashboard/api";
import { ErrorMessage, Field, Status, errorsByField } from "../../../web/dashboard/ui";
import type { projectRoutes } from "../routes";
import type { AnalysisSettings } from "../types";

const projectApi = apiOf<ReturnType<typeof projectRoutes>>();
type Form = { method: AnalysisSettings["method"]; significanceThreshold: string; autoRollback: boolean; minSampleDays: string; eventRetentionDays: string; staleAfterDays: string };
const FIELDS = ["significanceThreshold", "minSampleDays", "eventRetentionDays", "staleAfterDays"] as const;

/**
 * The project's experiment analysis (method, significance threshold,
 * auto-rollback, minimum sample days) and how long raw events are kept:
 * settings other pages point at ("auto-rollback on (settings)"). Its own
 * form and Save, beside the project's; the server checks every value.
 */
export function AnalysisSettingsForm(props: { analysis: AnalysisSettings; eventRetentionDays: number; staleAfterDays: number; manage: boolean; onSaved: () => Promise<void> }) {
  const initial = (): Form => ({
    method: props.analysis.method,
    significanceThreshold: String(props.analysis.significanceThreshold),
    autoRollback: props.analysis.autoRollback,
    minSampleDays: String(props.analysis.minSampleDays),
    eventRetentionDays: String(props.eventRetentionDays),
    staleAfterDays: String(props.staleAfterDays),
  });
  const [form, setForm] = useState<Form>(initial);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<(typeof FIELDS)[number], string>>>({});
  useEffect(() => setForm(initial()), [JSON.stringify(props.analysis), props.eventRetentionDays, props.staleAfterDays]);

  // Anything but a number goes as typed, for the server to refuse by name.
  const num = (text: string) => (text.trim() !== "" && Number.isFinite(Number(text)) ? Number(text) : text) as number;
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      await call(
        projectApi.api.admin.projects({ id: "current" }).patch({
          analysis: { method: form.method, significanceThreshold: num(form.significanceThreshold), autoRollback: form.autoRollback, minSampleDays: num(form.minSampleDays) },
          eventRetentionDays: num(form.eventRetentionDays),
          staleAfterDays: num(form.staleAfterDays),
        }),
      );
      // Said once the page holds the saved values: the reload refills this form, and must not land on what is typed next.
      await props.onSaved();
      setFieldErrors({});
      setError(null);
      setMessage("Saved the analysis and retention settings");
    } catch (err) {
      // `analysis.minSampleDays: …` names its setting after the object's name.
      const found = errorsByField(err, [...FIELDS, "analysis"] as const);
      const { analysis, ...fields } = found.fields;
      const inner = analysis && /analysis[./](significanceThreshold|minSampleDays)/.exec(analysis)?.[1];
      if (inner) fields[inner as "significanceThreshold" | "minSampleDays"] = analysis;
      else if (analysis) found.general = [found.general, analysis].filter(Boolean).join("; ");
      setFieldErrors(fields);
      setError(found.general ?? (Object.keys(found.fields).length ? null : describeError(err)));
      setMessage(null);
    }
  };
  const text = (key: (typeof FIELDS)[number]) => (e: Event) => setForm({ ...form, [key]: (e.target as HTMLInputElement).value });

  return (
    <form onSubmit={submit} noValidate class="narrow-form" aria-labelledby="analysis-settings">
      <h2 id="analysis-settings">Experiment analysis and data</h2>
      <fieldset disabled={!props.manage}>
        <legend class="visually-hidden">Experiment analysis and data</legend>
        <Field label="Analysis method" hint="How experiment results are computed.">
          {(attrs) => (
            <select {...attrs} value={form.method} onChange={(e) => setForm({ ...form, method: (e.target as HTMLSelectElement).value as Form["method"] })}>
              <option value="frequentist">Frequentist (p-values and confidence intervals)</option>
              <option value="bayesian">Bayesian (chance to win)</option>
            </select>
          )}
        </Field>
        <Field label="Significance threshold" error={fieldErrors.significanceThreshold} hint="Between 0 and 1, e.g. 0.05: a result is significant below it.">
          {(attrs) => <input {...attrs} type="number" min={0} max={1} step="any" value={form.significanceThreshold} onInput={text("significanceThreshold")} />}
        </Field>
        <Field label="Minimum sample days" error={fieldErrors.minSampleDays} hint="0 to 365: no result is called (and auto-rollback waits) before an experiment has run this long.">
          {(attrs) => <input {...attrs} type="number" min={0} max={365} step={1} value={form.minSampleDays} onInput={text("minSampleDays")} />}
        </Field>
        <label class="check">
          <input type="checkbox" checked={form.autoRollback} onChange={(e) => setForm({ ...form, autoRollback: (e.target as HTMLInputElement).checked })} /> Auto-rollback: stop a running
          experiment when a guardrail metric moves significantly the harmful way
        </label>
        <Field label="Keep raw events (days)" error={fieldErrors.eventRetentionDays} hint="1 to 365 (default 30). Older raw events are deleted; hourly roll-ups are kept 13 months.">
          {(attrs) => <input {...attrs} type="number" min={1} max={365} step={1} value={form.eventRetentionDays} onInput={text("eventRetentionDays")} />}
        </Field>
        <Field label="Stale after (days)" error={fieldErrors.staleAfterDays} hint="1 to 365 (default 30). A flag serving one value to everyone, or not evaluated, this long is listed under Stale flags.">
          {(attrs) => <input {...attrs} type="number" min={1} max={365} step={1} value={form.staleAfterDays} onInput={text("staleAfterDays")} />}
        </Field>
      </fieldset>
      <ErrorMessage error={error} />
      <Status message={message} />
      {props.manage && (
        <div class="actions start">
          <button type="submit">Save analysis settings</button>
        </div>
      )}
    </form>
  );
}
