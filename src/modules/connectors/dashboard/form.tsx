import { useEffect, useState } from "preact/hooks";
import { call } from "../../../web/dashboard/api";
import { Options, DeleteDialog } from "../../../web/dashboard/form-kit";
import { Dialog, ErrorMessage, Field, FormActions, Link, SecretOnce, errorsByField, focusFirstInvalid } from "../../../web/dashboard/ui";
import { type Connector, EVENT_TYPES, PROVIDER_FORMS, PROVIDER_NAMES, type ProviderName, connectorApi } from "./client";

// errorsByField keys a detail by its leading letters: `config.url: …` is `config`, `events[0]: …` is `events`.
const FIELDS = ["provider", "name", "events", "config", "fireToken", "apiKey", "appId", "privateKey", "installationId", "accessToken", "enabled"] as const;
type FieldName = (typeof FIELDS)[number];

type Form = { provider: ProviderName; name: string; events: string[]; settings: Record<string, string>; secrets: Record<string, string> };

const EMPTY: Form = { provider: "webhook", name: "", events: ["bug.created"], settings: {}, secrets: {} };

function formOf(c: Connector): Form {
  const settings: Record<string, string> = {};
  for (const [k, v] of Object.entries(c.config as Record<string, unknown>)) settings[k] = Array.isArray(v) ? v.join(", ") : String(v);
  return { provider: c.provider as ProviderName, name: c.name, events: [...c.events], settings, secrets: {} };
}

/** The config the form would send: typed settings only (a list setting split on commas). */
function configOf(form: Form, editing: Connector | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of PROVIDER_FORMS[form.provider].settings) {
    const text = (form.settings[s.name] ?? "").trim();
    const before = editing ? (editing.config as Record<string, unknown>)[s.name] : undefined;
    if (text === "") {
      // Cleared on edit: removed (the server refuses that for a required setting and says so).
      if (before !== undefined) out[s.name] = null;
      continue;
    }
    out[s.name] = s.list
      ? text
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean)
      : text;
  }
  return out;
}

/**
 * Create a connector (`editing` null: the provider first, then what it
 * needs) or edit one (name, events, settings; a credential typed replaces the
 * stored one, left empty keeps it). A webhook's signing secret is shown once,
 * after creating. What the server refuses is said on the field it names.
 */
export function ConnectorDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Connector | null; onClose: () => void; onSaved: (saved: { id: string; name: string; created: boolean }) => void }) {
  const [form, setForm] = useState<Form>(EMPTY);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [settingErrors, setSettingErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<{ id: string; name: string; secret: string } | null>(null);
  useEffect(() => {
    if (!open) return;
    setForm(editing ? formOf(editing) : EMPTY);
    setFieldErrors({});
    setSettingErrors({});
    setError(null);
    setSecret(null);
  }, [open, editing]);

  const spec = PROVIDER_FORMS[form.provider];
  const creatingOAuth = !editing && spec.kind === "oauth";
  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));
  const toggleEvent = (type: string, on: boolean) => setForm((f) => ({ ...f, events: on ? [...f.events.filter((e) => e !== type), type] : f.events.filter((e) => e !== type) }));

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const secrets = Object.fromEntries(Object.entries(form.secrets).filter(([, v]) => v.trim() !== ""));
    const events = EVENT_TYPES.filter((t) => form.events.includes(t));
    try {
      if (editing) {
        const config = configOf(form, editing);
        const saved = await call(
          connectorApi.api.admin
            .connectors({ id: editing.id })
            .patch({ name: form.name.trim(), events, ...(Object.keys(config).length > 0 ? { config } : {}), ...secrets }),
        );
        onSaved({ id: saved.id, name: saved.name, created: false });
        return;
      }
      const body = {
        provider: form.provider,
        ...(form.name.trim() ? { name: form.name.trim() } : {}),
        events,
        ...(spec.kind === "oauth" ? {} : { config: configOf(form, null) }),
        ...secrets,
      };
      const created = await call(connectorApi.api.admin.connectors.post(body as never));
      if (created.secret) setSecret({ id: created.id, name: form.name.trim(), secret: created.secret });
      else onSaved({ id: created.id, name: form.name.trim() || spec.label, created: true });
    } catch (err) {
      const split = errorsByField(err, FIELDS);
      const perSetting: Record<string, string> = {};
      const configError = split.fields.config;
      const m = configError ? /config\.(\w+)/.exec(configError) : null;
      if (m && spec.settings.some((s) => s.name === m[1])) {
        perSetting[m[1]!] = configError!;
        delete split.fields.config;
      }
      setFieldErrors(split.fields);
      setSettingErrors(perSetting);
      setError(split.general ?? split.fields.config ?? null);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };

  if (secret) {
    return (
      <Dialog open={open} title={`Webhook ${secret.name} created`} onClose={() => onSaved({ id: secret.id, name: secret.name, created: true })}>
        <SecretOnce secret={secret.secret} what="signing secret" />
        <p class="hint">
          Each delivery carries <code>X-Svc-Signature: t=…,v1=…</code>: the hex HMAC-SHA256 of <code>t.body</code> with this secret. docs/api.md ("Webhook signatures") shows how to check it.
        </p>
        <div class="actions">
          <button type="button" onClick={() => onSaved({ id: secret.id, name: secret.name, created: true })}>
            Done
          </button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog open={open} title={editing ? `Edit connector ${editing.name}` : "New connector"} onClose={onClose} wide>
      <form onSubmit={submit} noValidate>
        {editing ? (
          <p>
            Provider: <strong>{spec.label}</strong> <span class="muted mono">({editing.provider})</span>
          </p>
        ) : (
          <Field label="Provider" error={fieldErrors.provider} hint={spec.help}>
            {(attrs) => (
              <select {...attrs} value={form.provider} onChange={(e) => setForm({ ...EMPTY, name: form.name, events: form.events, provider: e.currentTarget.value as ProviderName })}>
                <Options options={PROVIDER_NAMES.map((p) => ({ value: p, text: PROVIDER_FORMS[p].label }))} />
              </select>
            )}
          </Field>
        )}
        <Field label="Name" error={fieldErrors.name} hint={spec.kind === "trigger" ? "Optional: defaults to the provider and its target" : "What people call it, e.g. Bugs to Linear"}>
          {(attrs) => <input {...attrs} value={form.name} onInput={(e) => set("name", e.currentTarget.value)} autoComplete="off" />}
        </Field>
        <fieldset aria-invalid={fieldErrors.events ? "true" : undefined}>
          <legend>Events it hears</legend>
          {EVENT_TYPES.map((t) => (
            <label class="check" key={t}>
              <input type="checkbox" checked={form.events.includes(t)} onChange={(e) => toggleEvent(t, e.currentTarget.checked)} /> <span class="mono">{t}</span>
            </label>
          ))}
          <ErrorMessage error={fieldErrors.events} />
        </fieldset>
        {creatingOAuth ? (
          <p class="hint">Its settings ({spec.settings.map((s) => s.label.toLowerCase()).join(", ")}) are set after connecting it.</p>
        ) : (
          spec.settings.length > 0 && (
            <fieldset>
              <legend>Settings</legend>
              {spec.settings.map((s) => (
                <Field key={s.name} label={s.label + (s.required ? "" : " (optional)")} error={settingErrors[s.name]} hint={s.hint}>
                  {(attrs) => <input {...attrs} value={form.settings[s.name] ?? ""} onInput={(e) => set("settings", { ...form.settings, [s.name]: e.currentTarget.value })} autoComplete="off" />}
                </Field>
              ))}
            </fieldset>
          )
        )}
        {spec.secrets.length > 0 && (
          <fieldset>
            <legend>Credentials</legend>
            <p class="hint">{editing ? `Stored encrypted: ${editing.credentialFields.join(", ") || "none"}. Type a value to replace it; leave empty to keep it.` : "Stored encrypted; never shown again."}</p>
            {spec.secrets.map((s) => (
              <Field key={s.name} label={s.label} error={fieldErrors[s.name]} hint={s.hint}>
                {(attrs) =>
                  s.multiline ? (
                    <textarea {...attrs} class="mono" rows={4} value={form.secrets[s.name] ?? ""} onInput={(e) => set("secrets", { ...form.secrets, [s.name]: e.currentTarget.value })} />
                  ) : (
                    <input {...attrs} type="password" autoComplete="off" value={form.secrets[s.name] ?? ""} onInput={(e) => set("secrets", { ...form.secrets, [s.name]: e.currentTarget.value })} />
                  )
                }
              </Field>
            ))}
          </fieldset>
        )}
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save connector" : "Create connector"} disabled={busy} />
      </form>
    </Dialog>
  );
}

export function DeleteConnectorDialog({ connector, onClose, onDeleted }: { connector: Connector | null; onClose: () => void; onDeleted: (c: Connector) => Promise<void> | void }) {
  return (
    <DeleteDialog
      item={connector}
      what="connector"
      message={
        <p>
          It stops hearing events at once; its delivery log goes with it, and deliveries still queued are dropped. See also the <Link href="/audit">audit trail</Link>.
        </p>
      }
      remove={(gone) => call(connectorApi.api.admin.connectors({ id: gone.id }).delete())}
      onClose={onClose}
      onDeleted={onDeleted}
    />
  );
}
