import { useEffect, useId, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { prettyJson } from "../../../web/dashboard/json-editor";
import { Options, SelectField, plainOptions, RemoveButton, useChoices } from "../../../web/dashboard/form-kit";
import { Dialog, ErrorMessage, Field, FormActions, Loading, PathError, errorAt, errorsByPath, focusFirstInvalid, focusLater, invalidAt } from "../../../web/dashboard/ui";
import { configApi } from "../../configs/dashboard/client";
import { gateApi } from "../../gates/dashboard/client";
import { loadMetrics } from "../../metrics/dashboard/client";
import { DEFAULT_STAGES, ENVS, type Env, ROLLOUT_FIELDS, type Rollout, minutesText, rolloutApi } from "./client";

let nextKey = 0;
type DraftStage = { key: number; percent: string; minutes: string };
type DraftWatch = { key: number; metric: string; direction: "lower" | "higher"; tolerance: string };
type Form = {
  kind: "gate" | "config";
  gate: string;
  config: string;
  env: Env;
  rules: string;
  rulesTouched: boolean;
  valueMode: "draft" | "value";
  value: string;
  valueTouched: boolean;
  stages: DraftStage[];
  metrics: DraftWatch[];
  errorTolerance: string;
  onRegression: "rollback" | "pause";
  notify: boolean;
  startAt: string;
  description: string;
};

const stage = (percent: number, minutes: number): DraftStage => ({ key: ++nextKey, percent: String(percent), minutes: String(minutes) });
const emptyForm = (): Form => ({
  kind: "gate",
  gate: "",
  config: "",
  env: "prod",
  rules: "[]",
  rulesTouched: false,
  valueMode: "draft",
  value: "",
  valueTouched: false,
  stages: DEFAULT_STAGES.map((s) => stage(s.percent, s.minutes)),
  metrics: [],
  errorTolerance: "0",
  onRegression: "rollback",
  notify: true,
  startAt: "",
  description: "",
});

/** A number as typed: a number, or null when it is not one (the server names the field). */
const num = (text: string): number | null => (text.trim() === "" || !Number.isFinite(Number(text)) ? null : Number(text));
/** A tolerance typed in percent, sent as the fraction the API takes (5 → 0.05). */
const fraction = (text: string): number | null => {
  const n = num(text);
  return n === null ? null : Number((n / 100).toPrecision(12));
};

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };
function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: `Not JSON: ${err instanceof Error ? err.message : String(err)} (a string needs quotes: "green")` };
  }
}

/**
 * New rollout: a gate's new rules (JSON, prefilled with what the env
 * publishes) or a config's new value (JSON, or the env's saved draft), the
 * env, the stages (the default plan prefilled), the watched metrics besides
 * the error rate (metric, which way is better, the regression tolerated),
 * the error rate's tolerance, the action on regression, notification and an
 * optional start time. What the server refuses lands on the control whose
 * path it names (`stages[1].percent`, `metrics[0].metric`, `rules`).
 */
export function NewRolloutDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (r: Rollout) => void }) {
  const [form, setForm] = useState<Form>(emptyForm);
  const [errors, setErrors] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const base = useId();
  const choices = useChoices(open, () =>
    Promise.all([call(gateApi.api.admin.gates.get({ query: {} })), call(configApi.api.admin.configs.get({ query: {} })), loadMetrics()]).then(([gates, configs, metrics]) => ({ gates, configs, metrics })),
  );
  useEffect(() => {
    if (!open) return;
    setForm(emptyForm());
    setErrors(new Map());
    setError(null);
  }, [open]);
  const data = choices.data;
  const gate = data?.gates.find((g) => g.name === form.gate);
  const config = data?.configs.find((c) => c.name === form.config);
  const draft = config?.drafts[form.env];
  // The first gate and config are chosen once known.
  useEffect(() => {
    if (!open || !data) return;
    setForm((f) => ({ ...f, gate: f.gate || data.gates[0]?.name || "", config: f.config || data.configs[0]?.name || "" }));
  }, [open, data]);
  // What the env publishes now is where the new rules or value start from (until the person edits them).
  useEffect(() => {
    if (gate && !form.rulesTouched) setForm((f) => ({ ...f, rules: prettyJson(gate.envs[f.env].rules) }));
  }, [gate?.id, form.env, form.rulesTouched]);
  useEffect(() => {
    if (config && !form.valueTouched) setForm((f) => ({ ...f, value: prettyJson(config.envs[f.env].value), valueMode: config.drafts[f.env] ? "draft" : "value" }));
  }, [config?.id, form.env, form.valueTouched]);

  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));
  const setStage = (i: number, patch: Partial<DraftStage>) => set("stages", form.stages.map((s, k) => (k === i ? { ...s, ...patch } : s)));
  const setWatch = (i: number, patch: Partial<DraftWatch>) => set("metrics", form.metrics.map((m, k) => (k === i ? { ...m, ...patch } : m)));

  const submit = async (e: Event) => {
    e.preventDefault();
    const local = new Map<string, string>();
    const body: Record<string, unknown> = { env: form.env };
    if (form.kind === "gate") {
      body.gate = form.gate;
      const rules = parseJson(form.rules);
      if (!rules.ok) local.set("rules", rules.message);
      else body.rules = rules.value;
    } else {
      body.config = form.config;
      if (form.valueMode === "value") {
        const value = parseJson(form.value);
        if (!value.ok) local.set("value", value.message);
        else body.value = value.value;
      }
    }
    if (form.startAt) {
      const at = new Date(form.startAt);
      if (Number.isNaN(at.getTime())) local.set("startAt", "Not a date and time");
      else body.startAt = at.toISOString();
    }
    if (local.size > 0) {
      setErrors(local);
      setError(null);
      focusFirstInvalid();
      return;
    }
    body.stages = form.stages.map((s) => ({ percent: num(s.percent), minutes: num(s.minutes) }));
    body.metrics = form.metrics.map((m) => ({ metric: m.metric, direction: m.direction, ...(m.tolerance.trim() === "" ? {} : { tolerance: fraction(m.tolerance) }) }));
    if (form.errorTolerance.trim() !== "") body.errorTolerance = fraction(form.errorTolerance);
    body.onRegression = form.onRegression;
    body.notify = form.notify;
    if (form.description.trim()) body.description = form.description.trim();
    setBusy(true);
    try {
      onCreated(await call(rolloutApi.api.admin.rollouts.post(body as Parameters<typeof rolloutApi.api.admin.rollouts.post>[0])));
    } catch (err) {
      const split = errorsByPath(err, ROLLOUT_FIELDS);
      setErrors(split.paths);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  const invalid = (path: string, id: string) => invalidAt(errors, path, id);
  const rowError = (path: string, id: string) => <PathError paths={errors} path={path} id={id} />;

  return (
    <Dialog open={open} title="New rollout" onClose={onClose} wide>
      <form class="rollout-form" onSubmit={submit} noValidate>
        {choices.error && <ErrorMessage error={`The gates, configs and metrics could not be loaded: ${choices.error}`} />}
        {!data && !choices.error ? (
          <Loading />
        ) : (
          <>
            <fieldset>
              <legend>What it rolls out</legend>
              <label class="check">
                <input type="radio" name={`${base}-kind`} value="gate" checked={form.kind === "gate"} onChange={() => set("kind", "gate")} /> A gate's new rules
              </label>
              <label class="check">
                <input type="radio" name={`${base}-kind`} value="config" checked={form.kind === "config"} onChange={() => set("kind", "config")} /> A config's new value
              </label>
            </fieldset>
            <div class="form-grid">
              {form.kind === "gate" ? (
                <Field label="Gate" error={errors.get("gate")} hint={data?.gates.length === 0 ? "No gates yet: create one first." : "Its rules change for the units in the current stage."}>
                  {(attrs) => (
                    <select {...attrs} value={form.gate} onChange={(e) => setForm((f) => ({ ...f, gate: e.currentTarget.value, rulesTouched: false }))}>
                      {data?.gates.length === 0 && <option value="">No gates</option>}
                      <Options options={data?.gates.map((g) => ({ value: g.name, text: g.name }))} />
                    </select>
                  )}
                </Field>
              ) : (
                <Field label="Config" error={errors.get("config")} hint={data?.configs.length === 0 ? "No configs yet: create one first." : "Its value changes for the units in the current stage."}>
                  {(attrs) => (
                    <select {...attrs} value={form.config} onChange={(e) => setForm((f) => ({ ...f, config: e.currentTarget.value, valueTouched: false }))}>
                      {data?.configs.length === 0 && <option value="">No configs</option>}
                      <Options options={data?.configs.map((c) => ({ value: c.name, text: c.name }))} />
                    </select>
                  )}
                </Field>
              )}
              <SelectField label="Env" error={errors.get("env")} hint="One rollout per gate or config and env at a time." value={form.env} onChange={(v: Env) => set("env", v)} options={plainOptions(ENVS)} />
            </div>

            {form.kind === "gate" ? (
              <Field label="New rules (JSON)" error={errorAt(errors, "rules")} hint={`The gate's whole rule list, as PUT /api/admin/gates/{id}/rules takes it; it starts as what ${form.env} publishes${gate ? ` (version ${gate.envs[form.env].version})` : ""}.`}>
                {(attrs) => <textarea {...attrs} class="editor mono" spellcheck={false} rows={Math.min(16, Math.max(5, form.rules.split("\n").length + 1))} value={form.rules} onInput={(e) => setForm((f) => ({ ...f, rules: e.currentTarget.value, rulesTouched: true }))} />}
              </Field>
            ) : (
              <fieldset>
                <legend>New value</legend>
                <label class="check">
                  <input type="radio" name={`${base}-value`} value="draft" checked={form.valueMode === "draft"} onChange={() => set("valueMode", "draft")} /> Use the env's draft
                  <span class="muted small"> ({draft ? `saved on ${form.env}` : `no draft on ${form.env}`})</span>
                </label>
                <label class="check">
                  <input type="radio" name={`${base}-value`} value="value" checked={form.valueMode === "value"} onChange={() => set("valueMode", "value")} /> This value
                </label>
                {form.valueMode === "draft" ? (
                  <>
                    {draft ? (
                      <figure class="diff-view">
                        <figcaption>The draft on {form.env}</figcaption>
                        <pre class="value">{prettyJson(draft.value)}</pre>
                      </figure>
                    ) : (
                      <p class="hint">Save a draft on {form.env} first, or give the value here.</p>
                    )}
                    <ErrorMessage error={errorAt(errors, "value")} />
                  </>
                ) : (
                  <Field label="Value (JSON)" error={errorAt(errors, "value")} hint={`Checked against the config's schema; it starts as what ${form.env} publishes${config ? ` (version ${config.envs[form.env].version})` : ""}.`}>
                    {(attrs) => <textarea {...attrs} class="editor mono" spellcheck={false} rows={Math.min(16, Math.max(5, form.value.split("\n").length + 1))} value={form.value} onInput={(e) => setForm((f) => ({ ...f, value: e.currentTarget.value, valueTouched: true }))} />}
                  </Field>
                )}
              </fieldset>
            )}

            <fieldset>
              <legend>Stages</legend>
              <p class="hint">Growing percentages of units, the last 100 %. A stage advances when its minutes are up, no regression is seen and the data is fresh.</p>
              <ErrorMessage error={errors.get("stages")} />
              {form.stages.map((s, i) => {
                const id = (f: string) => `${base}-s${s.key}-${f}`;
                const minutes = num(s.minutes);
                return (
                  <fieldset key={s.key} class="variant">
                    <legend>Stage {i + 1}</legend>
                    <div class="variant-grid">
                      <div class="field">
                        <label for={id("percent")}>Percent of units</label>
                        <input id={id("percent")} type="number" min={0} max={100} step="any" value={s.percent} onInput={(e) => setStage(i, { percent: e.currentTarget.value })} {...invalid(`stages.${i}.percent`, id("percent-error"))} />
                        {rowError(`stages.${i}.percent`, id("percent-error"))}
                      </div>
                      <div class="field">
                        <label for={id("minutes")}>Minimum minutes</label>
                        <input
                          id={id("minutes")}
                          type="number"
                          min={0}
                          step={1}
                          value={s.minutes}
                          onInput={(e) => setStage(i, { minutes: e.currentTarget.value })}
                          {...(errorAt(errors, `stages.${i}.minutes`) ? { "aria-invalid": "true", "aria-describedby": id("minutes-error") } : { "aria-describedby": id("minutes-hint") })}
                        />
                        <p class="hint" id={id("minutes-hint")}>
                          {minutes !== null && Number.isInteger(minutes) && minutes >= 0 ? minutesText(minutes) : "whole minutes"}
                        </p>
                        {rowError(`stages.${i}.minutes`, id("minutes-error"))}
                      </div>
                      <div class="field" style={{ alignItems: "flex-start", justifyContent: "flex-end" }}>
                        <RemoveButton label={`Remove stage ${i + 1}`} disabled={form.stages.length <= 1} onRemove={() => set("stages", form.stages.filter((_, k) => k !== i))} focusAfter={`${base}-add-stage`} />
                      </div>
                    </div>
                  </fieldset>
                );
              })}
              <div class="row">
                <button
                  type="button"
                  id={`${base}-add-stage`}
                  class="secondary small"
                  onClick={() => {
                    const added = stage(100, 0);
                    set("stages", [...form.stages, added]);
                    focusLater(`${base}-s${added.key}-percent`);
                  }}
                >
                  Add stage
                </button>
                <button type="button" class="secondary small" onClick={() => set("stages", DEFAULT_STAGES.map((s) => stage(s.percent, s.minutes)))}>
                  Default plan
                </button>
              </div>
            </fieldset>

            <fieldset>
              <legend>Watched metrics</legend>
              <p class="hint">The error rate (tracked errors per unit, lower is better) is always watched. Add any metric with the way it is better and the regression tolerated.</p>
              <Field label="Error rate: tolerated rise (%)" error={errors.get("errorTolerance")} hint="0: any rise the test is sure of stops the rollout; 10: up to 10 % more errors per unit is tolerated.">
                {(attrs) => <input {...attrs} type="number" min={0} step="any" value={form.errorTolerance} onInput={(e) => set("errorTolerance", e.currentTarget.value)} />}
              </Field>
              <ErrorMessage error={errors.get("metrics")} />
              {form.metrics.map((m, i) => {
                const id = (f: string) => `${base}-m${m.key}-${f}`;
                return (
                  <fieldset key={m.key} class="variant">
                    <legend>Metric {i + 1}</legend>
                    <div class="variant-grid">
                      <div class="field">
                        <label for={id("metric")}>Metric</label>
                        <select id={id("metric")} value={m.metric} onChange={(e) => setWatch(i, { metric: e.currentTarget.value })} {...invalid(`metrics.${i}.metric`, id("metric-error"))}>
                          <option value="">Choose a metric</option>
                          <Options options={data?.metrics.map((x) => ({ value: x.name, text: <>{x.name} ({x.kind})</> }))} />
                        </select>
                        {rowError(`metrics.${i}.metric`, id("metric-error"))}
                      </div>
                      <div class="field">
                        <label for={id("direction")}>Better when it is</label>
                        <select id={id("direction")} value={m.direction} onChange={(e) => setWatch(i, { direction: e.currentTarget.value as "lower" | "higher" })} {...invalid(`metrics.${i}.direction`, id("direction-error"))}>
                          <option value="higher">higher</option>
                          <option value="lower">lower</option>
                        </select>
                        {rowError(`metrics.${i}.direction`, id("direction-error"))}
                      </div>
                      <div class="field">
                        <label for={id("tolerance")}>Tolerated regression (%)</label>
                        <input id={id("tolerance")} type="number" min={0} step="any" value={m.tolerance} onInput={(e) => setWatch(i, { tolerance: e.currentTarget.value })} {...invalid(`metrics.${i}.tolerance`, id("tolerance-error"))} />
                        {rowError(`metrics.${i}.tolerance`, id("tolerance-error"))}
                      </div>
                      <div class="field" style={{ alignItems: "flex-start", justifyContent: "flex-end" }}>
                        <RemoveButton label={`Remove metric ${i + 1}${m.metric ? ` (${m.metric})` : ""}`} onRemove={() => set("metrics", form.metrics.filter((_, k) => k !== i))} focusAfter={`${base}-add-metric`} />
                      </div>
                    </div>
                  </fieldset>
                );
              })}
              <button
                type="button"
                id={`${base}-add-metric`}
                class="secondary small"
                disabled={data?.metrics.length === 0}
                onClick={() => {
                  const added: DraftWatch = { key: ++nextKey, metric: "", direction: "higher", tolerance: "0" };
                  set("metrics", [...form.metrics, added]);
                  focusLater(`${base}-m${added.key}-metric`);
                }}
              >
                Add metric
              </button>
              {data?.metrics.length === 0 && <p class="hint">No metrics in the project yet: only the error rate is watched.</p>}
            </fieldset>

            <div class="form-grid">
              <Field label="On regression" error={errors.get("onRegression")} hint="What the monitor does within one check of seeing a regression.">
                {(attrs) => (
                  <select {...attrs} value={form.onRegression} onChange={(e) => set("onRegression", e.currentTarget.value as Form["onRegression"])}>
                    <option value="rollback">Roll back: every unit gets the old value</option>
                    <option value="pause">Pause: hold the current stage</option>
                  </select>
                )}
              </Field>
              <Field label="Start at (optional)" error={errors.get("startAt")} hint="Your local time; empty starts it now.">
                {(attrs) => <input {...attrs} type="datetime-local" value={form.startAt} onInput={(e) => set("startAt", e.currentTarget.value)} />}
              </Field>
            </div>
            <label class="check">
              <input type="checkbox" checked={form.notify} onChange={(e) => set("notify", e.currentTarget.checked)} /> Notify the project's connectors (rollout events: advanced, paused, rolled back, completed)
            </label>
            <Field label="Description" error={errors.get("description")} hint="What the change is, shown in lists.">
              {(attrs) => <textarea {...attrs} rows={2} value={form.description} onInput={(e) => set("description", e.currentTarget.value)} />}
            </Field>
          </>
        )}
        <FormActions error={error} onCancel={onClose} submitLabel="Create rollout" disabled={busy || !data} />
      </form>
    </Dialog>
  );
}
