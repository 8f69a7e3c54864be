import { useEffect, useState } from "preact/hooks";
import { ENVS, type Env } from "../../../lib/envs";
import { ApiFailure, call, describeError } from "../../../web/dashboard/api";
import { Options, SelectField, TextAreaField, TextField, plainOptions, useChoices } from "../../../web/dashboard/form-kit";
import { prettyJson } from "../../../web/dashboard/json-editor";
import { Dialog, ErrorMessage, Field, FormActions, Loading, focusFirstInvalid } from "../../../web/dashboard/ui";
import { configApi } from "../../configs/dashboard/client";
import { gateApi } from "../../gates/dashboard/client";
import { killswitchApi } from "../../killswitches/dashboard/client";
import { loadSegments } from "../../segments/dashboard/client";
import { type ChangeKindInfo, type ChangeRequest, loadKinds, requestApi } from "./client";

/** The controls a refusal can land on. */
type FieldKey = "title" | "reason" | "kind" | "name" | "env" | "payload" | "rules" | "value" | "switchKey";

type Form = {
  title: string;
  reason: string;
  kind: string;
  name: string;
  env: Env;
  /** The JSON the person edits: rules, a value, a schema, a patch, or (a kind this page does not know) the whole change. */
  payload: string;
  /** config.publish: its rules, sent only when edited (sending them unchanged would publish them anew). */
  rules: string;
  rulesTouched: boolean;
  /** The payload was edited: a new target or env no longer refills it. */
  touched: boolean;
  /** killswitch.set */
  value: "true" | "false";
  switchKey: string;
};

const emptyForm = (): Form => ({ title: "", reason: "", kind: "", name: "", env: "prod", payload: "", rules: "", rulesTouched: false, touched: false, value: "false", switchKey: "" });

/** The kinds this dialog has a target picker and a prefilled payload for; any other kind is edited as its whole JSON body. */
const KNOWN = ["gate.rules", "config.publish", "config.schema", "killswitch.set", "segment.update"];

/** The JSON editor's label per kind. */
const PAYLOAD_LABEL: Record<string, string> = {
  "gate.rules": "Rules (JSON)",
  "config.publish": "Value (JSON)",
  "config.schema": "Schema (JSON)",
  "segment.update": "Patch (JSON)",
};

/**
 * A refusal split onto the dialog's controls: `title: …`, and a change's `changes[0].rules[1]…` or, from the
 * module's own check, `changes[0]: rules[1]…`; the field after `changes[0]` names the control. The rest goes above
 * the buttons.
 */
function splitRefusal(err: unknown, kind: string): { fields: Partial<Record<FieldKey, string>>; general: string | null } {
  const fields: Partial<Record<FieldKey, string>> = {};
  if (!(err instanceof ApiFailure) || !err.detail) return { fields, general: describeError(err) };
  const known = KNOWN.includes(kind);
  const rest: string[] = [];
  for (const part of err.detail.split("; ")) {
    let key: FieldKey | null = null;
    const top = /^(title|reason)\b/.exec(part);
    const change = /^changes(?:\[0\]|\.0)?(?:\s*:\s*|\.)?([A-Za-z]+)?/.exec(part);
    if (top) key = top[1] as FieldKey;
    else if (change) {
      const f = change[1];
      if (!known) key = f === "kind" ? "kind" : "payload";
      else if (f === "kind") key = "kind";
      else if (f === "name") key = "name";
      else if (f === "env") key = "env";
      else if (f === "switchKey") key = "switchKey";
      else if (f === "value") key = kind === "killswitch.set" ? "value" : "payload";
      else if (f === "rules") key = kind === "config.publish" ? "rules" : "payload";
      else key = "payload";
    }
    if (key && !fields[key]) fields[key] = `${err.message}: ${part}`;
    else rest.push(part);
  }
  return { fields, general: rest.length > 0 ? `${err.message}: ${rest.join("; ")}` : null };
}

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };
function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, message: `Not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * Open a change request: a title and a reason, the kind of change (the server's list), its target (a gate, config,
 * killswitch or segment of the project, and the env) and the change itself, prefilled with what is published now so
 * the person edits a copy (a gate's rules, a config's value, its schema, a segment's description and conditions).
 * What the server refuses lands on the control it names, the focus on the first.
 */
export function OpenRequestDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (r: ChangeRequest) => void }) {
  const [form, setForm] = useState<Form>(emptyForm);
  const [errors, setErrors] = useState<Partial<Record<FieldKey, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const choices = useChoices(open, () =>
    Promise.all([loadKinds(), call(gateApi.api.admin.gates.get({ query: {} })), call(configApi.api.admin.configs.get({ query: {} })), call(killswitchApi.api.admin.killswitches.get({ query: {} })), loadSegments()]).then(
      ([kinds, gates, configs, killswitches, segments]) => ({ kinds, gates, configs, killswitches, segments }),
    ),
  );
  const data = choices.data;
  useEffect(() => {
    if (!open) return;
    setForm(emptyForm());
    setErrors({});
    setError(null);
  }, [open]);
  const info: ChangeKindInfo | undefined = data?.kinds.find((k) => k.kind === form.kind);
  const targets: string[] =
    info?.target === "gate" ? (data?.gates.map((g) => g.name) ?? []) : info?.target === "config" ? (data?.configs.map((c) => c.name) ?? []) : info?.target === "killswitch" ? (data?.killswitches.map((k) => k.name) ?? []) : info?.target === "segment" ? (data?.segments.map((s) => s.name) ?? []) : [];
  const known = KNOWN.includes(form.kind);
  const hasEnv = info?.fields.includes("env") ?? false;
  const killswitch = data?.killswitches.find((k) => k.name === form.name);

  // The first kind once the kinds are known; the first target of a kind once it is chosen.
  useEffect(() => {
    if (open && data && !form.kind) setForm((f) => ({ ...f, kind: data.kinds.find((k) => k.kind === "gate.rules")?.kind ?? data.kinds[0]?.kind ?? "" }));
  }, [open, data]);
  useEffect(() => {
    if (known && !targets.includes(form.name)) setForm((f) => ({ ...f, name: targets[0] ?? "", touched: false, rulesTouched: false }));
  }, [form.kind, data]);
  // What is published now is where the change starts from, until the person edits it.
  useEffect(() => {
    if (!data || !info) return;
    const f = form;
    const next: Partial<Form> = {};
    if (!f.touched) {
      if (f.kind === "gate.rules") {
        const g = data.gates.find((x) => x.name === f.name);
        next.payload = g ? prettyJson(g.envs[f.env].rules) : "[]";
      } else if (f.kind === "config.publish") {
        const c = data.configs.find((x) => x.name === f.name);
        next.payload = c ? prettyJson(c.envs[f.env].value) : "null";
      } else if (f.kind === "config.schema") {
        const c = data.configs.find((x) => x.name === f.name);
        next.payload = c ? prettyJson(c.schema) : "true";
      } else if (f.kind === "segment.update") {
        const s = data.segments.find((x) => x.name === f.name);
        next.payload = prettyJson(s ? { description: s.description, conditions: s.conditions } : {});
      } else if (f.kind === "killswitch.set") {
        const k = data.killswitches.find((x) => x.name === f.name);
        const state = k?.envs[f.env];
        const v = state ? (f.switchKey ? (state.switches[f.switchKey] ?? false) : state.value) : false;
        next.value = v ? "true" : "false";
      } else {
        // A kind this page does not know: its whole body, each field to fill.
        next.payload = prettyJson(Object.fromEntries(info.fields.map((field) => [field, field === "env" ? f.env : null])));
      }
    }
    if (f.kind === "config.publish" && !f.rulesTouched) {
      const c = data.configs.find((x) => x.name === f.name);
      next.rules = prettyJson(c ? c.envs[f.env].rules : []);
    }
    if (Object.keys(next).length > 0) setForm((x) => ({ ...x, ...next }));
  }, [data, form.kind, form.name, form.env, form.switchKey, form.touched, form.rulesTouched]);

  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));

  const submit = async (e: Event) => {
    e.preventDefault();
    const local: Partial<Record<FieldKey, string>> = {};
    let change: Record<string, unknown> = { kind: form.kind };
    const payload = form.kind === "killswitch.set" ? null : parseJson(form.payload);
    if (payload && !payload.ok) local.payload = payload.message;
    if (!form.title.trim()) local.title = "A title says what the change does";
    if (known) {
      change.name = form.name;
      if (hasEnv) change.env = form.env;
      const value = payload?.ok ? payload.value : undefined;
      if (form.kind === "gate.rules") change.rules = value;
      else if (form.kind === "config.schema") change.schema = value;
      else if (form.kind === "segment.update") change.patch = value;
      else if (form.kind === "config.publish") {
        change.value = value;
        if (form.rulesTouched) {
          const rules = parseJson(form.rules);
          if (!rules.ok) local.rules = rules.message;
          else change.rules = rules.value;
        }
      } else if (form.kind === "killswitch.set") {
        change.value = form.value === "true";
        if (form.switchKey) change.switchKey = form.switchKey;
      }
    } else if (payload?.ok) {
      if (payload.value === null || typeof payload.value !== "object" || Array.isArray(payload.value)) local.payload = "The change is a JSON object of its fields";
      else change = { ...(payload.value as Record<string, unknown>), kind: form.kind };
    }
    if (Object.keys(local).length > 0) {
      setErrors(local);
      setError(null);
      focusFirstInvalid();
      return;
    }
    setBusy(true);
    try {
      const body = { title: form.title.trim(), ...(form.reason.trim() ? { reason: form.reason.trim() } : {}), changes: [change] };
      onCreated(await call(requestApi.api.admin.requests.post(body as Parameters<typeof requestApi.api.admin.requests.post>[0])));
    } catch (err) {
      const split = splitRefusal(err, form.kind);
      setErrors(split.fields);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  const targetLabel = info ? `${info.target.charAt(0).toUpperCase()}${info.target.slice(1)}` : "Target";
  return (
    <Dialog open={open} title="Open change request" onClose={onClose} wide>
      <form onSubmit={submit} noValidate>
        {choices.error && <ErrorMessage error={`The kinds of change and the project's gates, configs, killswitches and segments could not be loaded: ${choices.error}`} />}
        {!data && !choices.error ? (
          <Loading />
        ) : (
          <>
            <TextField label="Title" value={form.title} onInput={(v) => set("title", v)} error={errors.title} hint="What it does, in a line." required autoComplete="off" />
            <TextAreaField label="Reason" value={form.reason} onInput={(v) => set("reason", v)} error={errors.reason} hint="Why, for the people who approve it." rows={2} />
            <div class="form-grid">
              <Field label="Kind of change" error={errors.kind} hint={info?.description || undefined}>
                {(attrs) => (
                  <select {...attrs} value={form.kind} onChange={(e) => setForm((f) => ({ ...f, kind: e.currentTarget.value, touched: false, rulesTouched: false, switchKey: "" }))}>
                    <Options options={data?.kinds.map((k) => ({ value: k.kind, text: k.kind }))} />
                  </select>
                )}
              </Field>
              {known && (
                <Field label={targetLabel} error={errors.name} hint={targets.length === 0 ? `No ${info?.target ?? "target"}s in the project yet.` : undefined}>
                  {(attrs) => (
                    <select {...attrs} value={form.name} onChange={(e) => setForm((f) => ({ ...f, name: e.currentTarget.value, touched: false, rulesTouched: false, switchKey: "" }))}>
                      {targets.length === 0 && <option value="">None</option>}
                      <Options options={targets.map((t) => ({ value: t, text: t }))} />
                    </select>
                  )}
                </Field>
              )}
              {known && hasEnv && (
                <SelectField label="Env" error={errors.env} value={form.env} onChange={(v: Env) => setForm((f) => ({ ...f, env: v, touched: false, rulesTouched: false }))} options={plainOptions(ENVS)} />
              )}
            </div>
            {form.kind === "killswitch.set" ? (
              <div class="form-grid">
                <Field label="Sub-switch" error={errors.switchKey} hint="The whole killswitch, or one of its sub-switches on this env.">
                  {(attrs) => (
                    <select {...attrs} value={form.switchKey} onChange={(e) => setForm((f) => ({ ...f, switchKey: e.currentTarget.value, touched: false }))}>
                      <option value="">The whole killswitch</option>
                      <Options options={Object.keys(killswitch?.envs[form.env]?.switches ?? {}).map((k) => ({ value: k, text: k }))} />
                    </select>
                  )}
                </Field>
                <SelectField
                  label="New state"
                  error={errors.value}
                  hint="It starts as what the env publishes now."
                  value={form.value}
                  onChange={(v: "true" | "false") => setForm((f) => ({ ...f, value: v, touched: true }))}
                  options={[
                    { value: "true", text: "killed (true)" },
                    { value: "false", text: "live (false)" },
                  ]}
                />
              </div>
            ) : (
              <PayloadField
                label={known ? (PAYLOAD_LABEL[form.kind] ?? "Change (JSON)") : "Change (JSON)"}
                hint={known ? `It starts as what is published now${hasEnv ? ` on ${form.env}` : ""}: edit this copy.` : `This kind's fields: ${info?.fields.join(", ") ?? ""} (required: ${info?.required.join(", ") ?? ""}).`}
                value={form.payload}
                error={errors.payload}
                onChange={(text) => setForm((f) => ({ ...f, payload: text, touched: true }))}
              />
            )}
            {form.kind === "config.publish" && (
              <PayloadField
                label="Rules (JSON)"
                hint="Sent only when you edit them; otherwise the env keeps the rules it publishes."
                value={form.rules}
                error={errors.rules}
                onChange={(text) => setForm((f) => ({ ...f, rules: text, rulesTouched: true }))}
              />
            )}
          </>
        )}
        <FormActions error={error} onCancel={onClose} submitLabel="Open request" disabled={busy || !data} />
      </form>
    </Dialog>
  );
}

/** A labelled JSON editor whose refusal is tied to it (the kit's Field gives the id, the hint and the error). */
function PayloadField(props: { label: string; hint: string; value: string; error?: string; onChange: (text: string) => void }) {
  return (
    <Field label={props.label} error={props.error} hint={props.hint}>
      {(attrs) => (
        <textarea
          {...attrs}
          class="editor mono"
          spellcheck={false}
          rows={Math.min(18, Math.max(6, props.value.split("\n").length + 1))}
          value={props.value}
          onInput={(e) => props.onChange(e.currentTarget.value)}
        />
      )}
    </Field>
  );
}
