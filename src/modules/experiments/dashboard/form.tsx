// One piece: the experiment dialog, whose variants, allocation, overrides and guardrails share one form state and one validation.
import { useEffect, useId, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { Options, SelectField, TableHead, plainOptions, RemoveButton, useChoices } from "../../../web/dashboard/form-kit";
import { ConfirmDialog, Dialog, ErrorMessage, Field, FormActions, Link, Loading, PathError, errorAt, errorsByPath, focusFirstInvalid, focusLater, invalidAt } from "../../../web/dashboard/ui";
import { gateApi } from "../../gates/dashboard/client";
import { loadMetrics } from "../../metrics/dashboard/client";
import { drawable, loadUniverses } from "../../universes/dashboard/client";
import { AllocationDrawing, freeRange } from "./allocation";
import { ENVS, type Env, type Experiment, WORSE_WHEN, type WorseWhen, allocationShare, EXPERIMENT_FIELDS, experimentApi, experimentOf, loadExperiments } from "./client";

let nextKey = 0;
type DraftVariant = { key: number; vkey: string; name: string; weight: string; value: string; overrideKind: "" | "config" | "gate"; overrideName: string; overrideValue: string };
type DraftGuardrail = { key: number; metric: string; worseWhen: WorseWhen };
/** `autoRange`: the allocation is the default (not typed), so it follows the universe chosen to a free range. */
type Form = { name: string; description: string; universe: string; env: Env; variants: DraftVariant[]; start: string; end: string; autoRange: boolean; gate: string; primaryMetric: string; guardrails: DraftGuardrail[] };

const json = (v: unknown) => (v === null || v === undefined ? "" : JSON.stringify(v));
const variant = (vkey: string, weight = "50"): DraftVariant => ({ key: ++nextKey, vkey, name: "", weight, value: "", overrideKind: "", overrideName: "", overrideValue: "" });

function formOf(e: Experiment | null): Form {
  if (!e) return { name: "", description: "", universe: "", env: "prod", variants: [variant("control"), variant("treatment")], start: "0", end: "1000", autoRange: true, gate: "", primaryMetric: "", guardrails: [] };
  return {
    name: e.name,
    description: e.description ?? "",
    universe: e.universeId,
    env: e.env,
    variants: e.variants.map((v) => ({
      key: ++nextKey,
      vkey: v.key,
      name: v.name === v.key ? "" : v.name,
      weight: String(v.weight),
      value: json(v.value),
      overrideKind: v.override?.kind ?? "",
      overrideName: v.override?.name ?? "",
      overrideValue: v.override ? json(v.override.value) : "",
    })),
    start: String(e.allocation[0]),
    end: String(e.allocation[1]),
    autoRange: false,
    gate: e.gate ?? "",
    primaryMetric: e.primaryMetric ?? "",
    guardrails: e.guardrailMetrics.map((g) => ({ key: ++nextKey, metric: g.metric, worseWhen: g.worseWhen as WorseWhen })),
  };
}

/** A bound or weight as typed: a number, or NaN (JSON sends it as null, and the server names the field). */
const num = (text: string) => (text.trim() === "" ? Number.NaN : Number(text));
const sendable = (n: number) => (Number.isFinite(n) ? n : (null as unknown as number));

/** What each state lets change (the server's rule: a running experiment keeps its split, a stopped one its design). */
const CHANGEABLE: Record<string, readonly string[]> = {
  draft: ["name", "description", "universe", "env", "variants", "allocation", "gate", "primaryMetric", "guardrailMetrics"],
  running: ["name", "description", "primaryMetric", "guardrailMetrics"],
  stopped: ["name", "description"],
};

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };
function parseJson(text: string, empty: unknown): Parsed {
  if (text.trim() === "") return { ok: true, value: empty };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: `Not JSON: ${err instanceof Error ? err.message : String(err)} (a string needs quotes: "green")` };
  }
}

/**
 * New experiment (`editing` null) or edit one: name, description, universe,
 * env, variants (key, name, weight, a JSON value, an optional override of a
 * config or gate), the allocation drawn live over the universe's segments
 * with its holdout and the other running experiments, the targeting gate,
 * the primary metric and guardrails. A running experiment changes only its
 * name, description and metrics, a stopped one its name and description:
 * the rest shows, disabled. What the server refuses is said on the control
 * whose path it names (`variants[1].weight`, `guardrailMetrics[0].metric`).
 */
export function ExperimentDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Experiment | null; onClose: () => void; onSaved: (e: Experiment) => void }) {
  const [form, setForm] = useState<Form>(formOf(null));
  const [errors, setErrors] = useState<Map<string, string>>(new Map());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const base = useId();
  // What the selects offer, read at each opening (someone may have added a metric since).
  const choices = useChoices(open, () =>
    Promise.all([loadUniverses(), call(gateApi.api.admin.gates.get({ query: {} })), loadMetrics(), loadExperiments({ status: "running" })]).then(([universes, gates, metrics, running]) => ({ universes, gates, metrics, running })),
  );
  useEffect(() => {
    if (!open) return;
    setForm(formOf(editing));
    setErrors(new Map());
    setError(null);
  }, [open, editing]);
  // A new experiment starts in the first universe once they are known.
  useEffect(() => {
    const first = choices.data?.universes[0];
    if (open && !editing && first) setForm((f) => (f.universe ? f : { ...f, universe: first.id }));
  }, [open, editing, choices.data]);

  const status = editing?.status ?? "draft";
  const can = (field: string) => CHANGEABLE[status]!.includes(field);
  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));
  // A bound typed by hand: the allocation no longer follows the universe.
  const typed = (key: "start" | "end", value: string) => setForm((f) => ({ ...f, [key]: value, autoRange: false }));
  const setVariant = (i: number, patch: Partial<DraftVariant>) => set("variants", form.variants.map((v, k) => (k === i ? { ...v, ...patch } : v)));
  const setGuardrail = (i: number, patch: Partial<DraftGuardrail>) => set("guardrails", form.guardrails.map((g, k) => (k === i ? { ...g, ...patch } : g)));

  const data = choices.data;
  const universe = data?.universes.find((u) => u.id === form.universe);
  const running = (data?.running ?? []).filter((e) => e.universeId === form.universe && e.id !== editing?.id);
  const range = [num(form.start), num(form.end)];
  // The default allocation keeps clear of the chosen universe's holdout and running experiments (issue 27, item 15).
  const free = universe && form.autoRange ? freeRange(universe.holdout_range, running) : null;
  useEffect(() => {
    if (free && (form.start !== String(free[0]) || form.end !== String(free[1]))) setForm((f) => (f.autoRange ? { ...f, start: String(free[0]), end: String(free[1]) } : f));
  }, [free?.[0], free?.[1]]);
  const weightSum = form.variants.reduce((s, v) => s + (num(v.weight) > 0 ? num(v.weight) : 0), 0);

  const submit = async (e: Event) => {
    e.preventDefault();
    // The JSON fields first: what does not parse cannot be sent.
    const local = new Map<string, string>();
    const variants = form.variants.map((v, i) => {
      const value = parseJson(v.value, null);
      if (!value.ok) local.set(`variants.${i}.value`, value.message);
      let override: { kind: "config" | "gate"; name: string; value?: unknown } | null = null;
      if (v.overrideKind === "gate") override = { kind: "gate", name: v.overrideName.trim(), value: v.overrideValue === "true" ? true : v.overrideValue === "false" ? false : undefined };
      if (v.overrideKind === "config") {
        const o = parseJson(v.overrideValue, undefined);
        if (!o.ok) local.set(`variants.${i}.override.value`, o.message);
        override = { kind: "config", name: v.overrideName.trim(), ...(o.ok && o.value !== undefined ? { value: o.value } : {}) };
      }
      return { key: v.vkey.trim(), ...(v.name.trim() ? { name: v.name.trim() } : {}), weight: sendable(num(v.weight)), value: value.ok ? value.value : null, ...(override ? { override } : {}) };
    });
    if (local.size > 0) {
      setErrors(local);
      setError(null);
      focusFirstInvalid();
      return;
    }
    const body = {
      name: form.name.trim(),
      description: form.description.trim() || null,
      universe: form.universe,
      env: form.env,
      variants,
      allocation: range.map(sendable),
      gate: form.gate || null,
      primaryMetric: form.primaryMetric || null,
      guardrailMetrics: form.guardrails.map((g) => ({ metric: g.metric, worseWhen: g.worseWhen })),
    };
    setBusy(true);
    try {
      // An edit sends what its state may change (a running experiment refuses its split even unchanged).
      const saved = editing
        ? await call(experimentOf(editing.id).patch(Object.fromEntries(Object.entries(body).filter(([k]) => can(k))) as typeof body))
        : await call(experimentApi.api.admin.experiments.post(body));
      onSaved(saved);
    } catch (err) {
      const split = errorsByPath(err, EXPERIMENT_FIELDS);
      setErrors(split.paths);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  const fixedNote = status === "running" ? "fixed while the experiment runs: its units would change variant mid-test" : "fixed: a stopped experiment is a record";
  const invalid = (path: string, id: string) => invalidAt(errors, path, id);
  const rowError = (path: string, id: string) => <PathError paths={errors} path={path} id={id} />;

  return (
    <Dialog open={open} title={editing ? `Edit experiment ${editing.name}` : "New experiment"} onClose={onClose} wide>
      <form class="experiment-form" onSubmit={submit} noValidate>
        {editing && status !== "draft" && <p class="hint">This experiment is {status}: only {CHANGEABLE[status]!.join(", ").replace(/, ([^,]*)$/, " and $1")} can change; the rest is {fixedNote}.</p>}
        <Field label="Name" error={errors.get("name")} hint="Unique in the project, e.g. checkout-button; SDKs ask getVariant by it.">
          {(attrs) => <input {...attrs} required value={form.name} onInput={(e) => set("name", e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <Field label="Description" error={errors.get("description")} hint="The hypothesis: what should change, and why.">
          {(attrs) => <textarea {...attrs} rows={2} value={form.description} onInput={(e) => set("description", e.currentTarget.value)} />}
        </Field>
        {choices.error && <ErrorMessage error={`The universes, gates and metrics could not be loaded: ${choices.error}`} />}
        {!data && !choices.error ? (
          <Loading />
        ) : (
          <>
            <div class="form-grid">
              <Field label="Universe" error={errors.get("universe")} hint={data?.universes.length === 0 ? "No universes yet: create one first." : "Whose units it splits."}>
                {(attrs) => (
                  <select {...attrs} disabled={!can("universe")} value={form.universe} onChange={(e) => set("universe", e.currentTarget.value)}>
                    <option value="">Choose a universe</option>
                    <Options options={data?.universes.map((u) => ({ value: u.id, text: <>{u.name} ({u.unit_type})</> }))} />
                  </select>
                )}
              </Field>
              <SelectField label="Env" error={errors.get("env")} hint="The snapshot that publishes it while it runs." disabled={!can("env")} value={form.env} onChange={(v: Env) => set("env", v)} options={plainOptions(ENVS)} />
            </div>

            <fieldset>
              <legend>Variants</legend>
              <p class="hint">
                The first is the control. Weights are relative ([50, 50] and [1, 1] split alike). A value is any JSON the SDK hands back; an override also changes a config's value or a gate's answer for the variant's units.
              </p>
              <ErrorMessage error={errors.get("variants")} />
              {form.variants.map((v, i) => {
                const at = `variants.${i}`;
                const e = (f: string) => `${base}-v${v.key}-${f}-error`;
                const w = num(v.weight);
                return (
                  <fieldset key={v.key} class="variant" disabled={!can("variants")}>
                    <legend>
                      Variant {i + 1}
                      {i === 0 ? " (control)" : ""}
                    </legend>
                    <div class="variant-grid">
                      <div class="field">
                        <label for={`${base}-v${v.key}-key`}>Key</label>
                        <input id={`${base}-v${v.key}-key`} value={v.vkey} autoComplete="off" onInput={(ev) => setVariant(i, { vkey: ev.currentTarget.value })} {...invalid(`${at}.key`, e("key"))} />
                        {rowError(`${at}.key`, e("key"))}
                      </div>
                      <div class="field">
                        <label for={`${base}-v${v.key}-name`}>Display name</label>
                        <input id={`${base}-v${v.key}-name`} value={v.name} placeholder={v.vkey} autoComplete="off" onInput={(ev) => setVariant(i, { name: ev.currentTarget.value })} {...invalid(`${at}.name`, e("name"))} />
                        {rowError(`${at}.name`, e("name"))}
                      </div>
                      <div class="field">
                        <label for={`${base}-v${v.key}-weight`}>Weight</label>
                        <input
                          id={`${base}-v${v.key}-weight`}
                          type="number"
                          min={0}
                          step="any"
                          value={v.weight}
                          onInput={(ev) => setVariant(i, { weight: ev.currentTarget.value })}
                          {...(errorAt(errors, `${at}.weight`) ? { "aria-invalid": "true", "aria-describedby": e("weight") } : { "aria-describedby": `${base}-v${v.key}-share` })}
                        />
                        <p class="hint" id={`${base}-v${v.key}-share`}>
                          {w > 0 && weightSum > 0 ? `${Number(((w / weightSum) * 100).toFixed(1))} % of the allocation` : "above 0"}
                        </p>
                        {rowError(`${at}.weight`, e("weight"))}
                      </div>
                      <div class="field">
                        <label for={`${base}-v${v.key}-value`}>Value (JSON)</label>
                        <input id={`${base}-v${v.key}-value`} class="mono" value={v.value} placeholder="null" autoComplete="off" spellcheck={false} onInput={(ev) => setVariant(i, { value: ev.currentTarget.value })} {...invalid(`${at}.value`, e("value"))} />
                        {rowError(`${at}.value`, e("value"))}
                      </div>
                      <div class="field">
                        <label for={`${base}-v${v.key}-ok`}>Override</label>
                        <select id={`${base}-v${v.key}-ok`} value={v.overrideKind} onChange={(ev) => setVariant(i, { overrideKind: ev.currentTarget.value as DraftVariant["overrideKind"], overrideValue: "" })} {...invalid(`${at}.override.kind`, e("override"))}>
                          <option value="">None</option>
                          <option value="config">A config's value</option>
                          <option value="gate">A gate's answer</option>
                        </select>
                      </div>
                      {v.overrideKind && (
                        <>
                          <div class="field">
                            <label for={`${base}-v${v.key}-on`}>{v.overrideKind === "gate" ? "Gate" : "Config"} it overrides</label>
                            {v.overrideKind === "gate" ? (
                              <select id={`${base}-v${v.key}-on`} value={v.overrideName} onChange={(ev) => setVariant(i, { overrideName: ev.currentTarget.value })} {...invalid(`${at}.override.name`, e("override"))}>
                                <option value="">Choose a gate</option>
                                <Options options={data?.gates.map((g) => ({ value: g.name, text: g.name }))} />
                                {v.overrideName && !data?.gates.some((g) => g.name === v.overrideName) && <option value={v.overrideName}>{v.overrideName} (not found)</option>}
                              </select>
                            ) : (
                              <input id={`${base}-v${v.key}-on`} value={v.overrideName} autoComplete="off" onInput={(ev) => setVariant(i, { overrideName: ev.currentTarget.value })} {...invalid(`${at}.override.name`, e("override"))} />
                            )}
                          </div>
                          <div class="field">
                            <label for={`${base}-v${v.key}-ov`}>{v.overrideKind === "gate" ? "Gate answers" : "Config value (JSON)"}</label>
                            {v.overrideKind === "gate" ? (
                              <select id={`${base}-v${v.key}-ov`} value={v.overrideValue} onChange={(ev) => setVariant(i, { overrideValue: ev.currentTarget.value })} {...invalid(`${at}.override.value`, e("override"))}>
                                <option value="">Choose</option>
                                <option value="true">true (on)</option>
                                <option value="false">false (off)</option>
                              </select>
                            ) : (
                              <input id={`${base}-v${v.key}-ov`} class="mono" value={v.overrideValue} autoComplete="off" spellcheck={false} onInput={(ev) => setVariant(i, { overrideValue: ev.currentTarget.value })} {...invalid(`${at}.override.value`, e("override"))} />
                            )}
                          </div>
                        </>
                      )}
                    </div>
                    {rowError(`${at}.override`, e("override"))}
                    {can("variants") && form.variants.length > 2 && (
                      <RemoveButton label={`Remove variant ${i + 1} (${v.vkey || "no key"})`} onRemove={() => set("variants", form.variants.filter((_, k) => k !== i))} focusAfter={`${base}-add-variant`} />
                    )}
                  </fieldset>
                );
              })}
              {can("variants") && form.variants.length < 10 && (
                <button
                  type="button"
                  class="secondary small"
                  id={`${base}-add-variant`}
                  onClick={() => {
                    const added = variant(`treatment-${form.variants.length}`);
                    set("variants", [...form.variants, added]);
                    focusLater(`${base}-v${added.key}-key`);
                  }}
                >
                  Add variant
                </button>
              )}
            </fieldset>

            <fieldset>
              <legend>Allocation</legend>
              <p class="hint">A range of the universe's 10,000 segments: [start, end), end excluded. It may not overlap the holdout, nor a running experiment of the universe when it starts.</p>
              <div class="form-grid">
                <Field label="First segment" error={errorAt(errors, "allocation")} hint="0 to 9,999">
                  {(attrs) => <input {...attrs} disabled={!can("allocation")} type="number" inputMode="numeric" min={0} max={9999} step={1} value={form.start} onInput={(e) => typed("start", e.currentTarget.value)} />}
                </Field>
                <Field label="End segment (excluded)" hint={drawable(range) ? `${allocationShare(range)} % of the universe's units` : "1 to 10,000"}>
                  {(attrs) => (
                    <input {...attrs} aria-invalid={errorAt(errors, "allocation") ? "true" : undefined} disabled={!can("allocation")} type="number" inputMode="numeric" min={1} max={10000} step={1} value={form.end} onInput={(e) => typed("end", e.currentTarget.value)} />
                  )}
                </Field>
              </div>
              {universe ? (
                <AllocationDrawing
                  name={form.name.trim()}
                  universe={universe.name}
                  range={drawable(range) ? range : null}
                  holdout={universe.holdout_range}
                  running={running.map((r) => ({ name: r.name, allocation: r.allocation }))}
                  caption="Allocation preview"
                />
              ) : (
                <p class="hint">Choose a universe to see its segments.</p>
              )}
              {!drawable(range) && <p class="hint">The drawing shows this experiment once the range is whole segments with start below end, within 0 to 10,000.</p>}
            </fieldset>

            <fieldset>
              <legend>Targeting and metrics</legend>
              <Field label="Gate" error={errors.get("gate")} hint="Only units the gate lets through (in the experiment's env) are in it.">
                {(attrs) => (
                  <select {...attrs} disabled={!can("gate")} value={form.gate} onChange={(e) => set("gate", e.currentTarget.value)}>
                    <option value="">Everyone in the allocation</option>
                    <Options options={data?.gates.map((g) => ({ value: g.name, text: g.name }))} />
                    {form.gate && !data?.gates.some((g) => g.name === form.gate) && <option value={form.gate}>{form.gate} (not found)</option>}
                  </select>
                )}
              </Field>
              <Field label="Primary metric" error={errors.get("primaryMetric")} hint="The decision metric.">
                {(attrs) => (
                  <select {...attrs} disabled={!can("primaryMetric")} value={form.primaryMetric} onChange={(e) => set("primaryMetric", e.currentTarget.value)}>
                    <option value="">None yet</option>
                    <Options options={data?.metrics.map((m) => ({ value: m.id, text: <>{m.name} ({m.kind})</> }))} />
                  </select>
                )}
              </Field>
              <p class="field-label">Guardrail metrics</p>
              <p class="hint">
                Metrics that must not get worse. With the project's auto-rollback on (<Link href="/settings">settings</Link>), a significant move the harmful way stops the experiment.
              </p>
              <ErrorMessage error={errors.get("guardrailMetrics")} />
              {form.guardrails.length === 0 ? (
                <p class="muted small">No guardrails.</p>
              ) : (
                <table>
                  <caption class="visually-hidden">Guardrail metrics and which move of each is harm</caption>
                  <TableHead columns={["Metric", "Worse when it"]} actions />
                  <tbody>
                    {form.guardrails.map((g, i) => {
                      const id = `${base}-g${g.key}-error`;
                      return (
                        <tr key={g.key}>
                          <td>
                            <select id={`${base}-g${g.key}`} aria-label={`Metric of guardrail ${i + 1}`} disabled={!can("guardrailMetrics")} value={g.metric} onChange={(e) => setGuardrail(i, { metric: e.currentTarget.value })} {...invalid(`guardrailMetrics.${i}`, id)}>
                              <option value="">Choose a metric</option>
                              <Options options={data?.metrics.map((m) => ({ value: m.id, text: <>{m.name} ({m.kind})</> }))} />
                            </select>
                            {rowError(`guardrailMetrics.${i}`, id)}
                          </td>
                          <td>
                            <select aria-label={`Guardrail ${i + 1} is worse when the metric`} disabled={!can("guardrailMetrics")} value={g.worseWhen} onChange={(e) => setGuardrail(i, { worseWhen: e.currentTarget.value as WorseWhen })}>
                              <Options options={WORSE_WHEN.map((w) => ({ value: w, text: w === "increase" ? "increases (errors, latency)" : "decreases (revenue, retention)" }))} />
                            </select>
                          </td>
                          <td>
                            {can("guardrailMetrics") && (
                              <RemoveButton label={`Remove guardrail ${i + 1}`} onRemove={() => set("guardrails", form.guardrails.filter((_, k) => k !== i))} focusAfter={`${base}-add-guardrail`} />
                            )}
                          </td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              )}
              {can("guardrailMetrics") && (
                <button
                  type="button"
                  class="secondary small"
                  id={`${base}-add-guardrail`}
                  onClick={() => {
                    const added: DraftGuardrail = { key: ++nextKey, metric: "", worseWhen: "decrease" };
                    set("guardrails", [...form.guardrails, added]);
                    focusLater(`${base}-g${added.key}`);
                  }}
                >
                  Add guardrail
                </button>
              )}
            </fieldset>
          </>
        )}
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save experiment" : "Create experiment"} disabled={busy || !data} />
      </form>
    </Dialog>
  );
}

/** Asks before deleting; a running experiment is refused by the server (stop it first), said in the dialog. */
export function DeleteExperimentDialog({ experiment, onClose, onDeleted }: { experiment: Experiment | null; onClose: () => void; onDeleted: (e: Experiment) => Promise<void> | void }) {
  return (
    <ConfirmDialog
      open={experiment !== null}
      title={`Delete ${experiment?.name ?? ""}?`}
      message={
        <p>
          Its design and outcome go (the <Link href="/audit">audit trail</Link> keeps who did what); the exposure and outcome events stay. A running experiment must be stopped first.
        </p>
      }
      confirmLabel="Delete experiment"
      danger
      onConfirm={async () => {
        const gone = experiment!;
        await call(experimentOf(gone.id).delete());
        await onDeleted(gone);
      }}
      onClose={onClose}
    />
  );
}
