import { ApiFailure, call, describeError } from "../../../web/dashboard/api";
import { NameField, TextAreaField, useDialogForm, DeleteDialog } from "../../../web/dashboard/form-kit";
import { ConfirmDialog, Dialog, Field, FormActions, Link, focusFirstInvalid } from "../../../web/dashboard/ui";
import { KEY_HINT, type Profile, type TranslationKey, VALUE_MAX, i18nApi } from "./client";

/** Create a profile (`editing` null) or rename one / change its locale. Refusals land on the field they name. */
export function ProfileDialog({ open, editing, onClose, onSaved }: { open: boolean; editing: Profile | null; onClose: () => void; onSaved: (p: Profile) => void }) {
  const { form, set, fieldErrors, error, busy, submit } = useDialogForm<{ name: string; locale: string }, "name" | "locale">(open, () => ({ name: editing?.name ?? "", locale: editing?.locale ?? "" }), [editing]);
  const { name, locale } = form;

  const save = submit(["name", "locale"], async () => {
    const saved = editing
        ? await call(
            i18nApi.api.admin.i18n.profiles({ id: editing.id }).patch({
              ...(name.trim() !== editing.name ? { name: name.trim() } : {}),
              ...(locale.trim() !== editing.locale ? { locale: locale.trim() } : {}),
            }),
          )
        : await call(i18nApi.api.admin.i18n.profiles.post({ name: name.trim(), locale: locale.trim() }));
    onSaved(saved);
  });

  return (
    <Dialog open={open} title={editing ? `Edit profile ${editing.name}` : "New translation profile"} onClose={onClose}>
      <form onSubmit={save} noValidate>
        <NameField error={fieldErrors.name} hint="Unique in the project, e.g. web-de; the CLI and the API name it." value={name} onInput={(v) => set("name", v)} />
        <Field label="Locale" error={fieldErrors.locale} hint="A BCP 47 language tag such as en, de-CH, pt-BR or zh-Hant-TW; one profile per locale.">
          {(attrs) => <input {...attrs} required value={locale} onInput={(e) => set("locale", e.currentTarget.value)} autoComplete="off" spellcheck={false} />}
        </Field>
        {editing && <p class="hint">Its {editing.keyCount} keys move with it: SDKs find them under the new locale.</p>}
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save profile" : "Create profile"} disabled={busy} />
      </form>
    </Dialog>
  );
}

export function DeleteProfileDialog({ profile, onClose, onDeleted }: { profile: Profile | null; onClose: () => void; onDeleted: (p: Profile) => Promise<void> | void }) {
  return (
    <DeleteDialog
      item={profile}
      what="profile"
      message={
        <p>
          Its {profile?.keyCount ?? 0} {profile?.keyCount === 1 ? "key goes" : "keys go"} with it, and SDKs stop finding locale <span class="mono">{profile?.locale}</span> with the next snapshot. See
          also the <Link href="/audit">audit trail</Link>.
        </p>
      }
      remove={(gone) => call(i18nApi.api.admin.i18n.profiles({ id: gone.id }).delete())}
      onClose={onClose}
      onDeleted={onDeleted}
    />
  );
}

/** A refusal of a key write split onto the two fields: `keys.0.key: …` and `key: …` on the key, `keys.0.value: …` and `value: …` on the value. */
function keyErrors(err: unknown): { fields: { key?: string; value?: string }; general: string | null } {
  if (!(err instanceof ApiFailure) || !err.detail) return { fields: {}, general: describeError(err) };
  const out: { key?: string; value?: string } = {};
  const rest: string[] = [];
  for (const part of err.detail.split("; ")) {
    const m = /^(?:keys\.\d+\.)?(key|value):\s*/.exec(part);
    const field = m?.[1] as "key" | "value" | undefined;
    if (field && !out[field]) out[field] = `${err.message}: ${part.slice(m![0].length)}`;
    else rest.push(part);
  }
  return { fields: out, general: rest.length > 0 ? `${err.message}: ${rest.join("; ")}` : null };
}

/**
 * Add a key to the profile (`editing` null: insert-only, so a key the
 * profile has is refused on the key field) or change one key's value.
 */
export function KeyDialog({
  open,
  profile,
  editing,
  onClose,
  onSaved,
}: { open: boolean; profile: Profile; editing: TranslationKey | null; onClose: () => void; onSaved: (key: string, added: boolean) => void }) {
  const { form, set, fieldErrors, setFieldErrors, error, setError, busy, submit } = useDialogForm<{ key: string; value: string }, "key" | "value">(
    open,
    () => ({ key: editing?.key ?? "", value: editing?.value ?? "" }),
    [editing],
  );
  const { key, value } = form;

  const save = submit(keyErrors, async () => {
    if (editing) {
      await call(i18nApi.api.admin.i18n.keys({ key: editing.key }).patch({ profile_id: profile.id, value }));
      onSaved(editing.key, false);
    } else {
      const pushed = await call(i18nApi.api.admin.i18n.keys.post({ profile_id: profile.id, keys: [{ key: key.trim(), value }] }));
      if (pushed.skipped_count > 0) {
        setFieldErrors({ key: `${key.trim()} is already in ${profile.name}: edit it in the table instead (adding never changes a key)` });
        setError(null);
        focusFirstInvalid();
        return;
      }
      onSaved(key.trim(), true);
    }
  });

  return (
    <Dialog open={open} title={editing ? `Edit key ${editing.key}` : `Add a key to ${profile.name}`} onClose={onClose} wide>
      <form onSubmit={save} noValidate>
        {editing ? (
          <p>
            Key <span class="mono">{editing.key}</span> in {profile.name} (<span class="mono">{profile.locale}</span>)
          </p>
        ) : (
          <Field label="Key" error={fieldErrors.key} hint={KEY_HINT}>
            {(attrs) => <input {...attrs} class="mono" required value={key} onInput={(e) => set("key", e.currentTarget.value)} autoComplete="off" spellcheck={false} />}
          </Field>
        )}
        <TextAreaField
          label="Value"
          error={fieldErrors.value}
          hint={`The text in ${profile.locale}, at most ${VALUE_MAX.toLocaleString("en")} characters; {name} placeholders are filled by the SDK's t(key, {vars}).`}
          rows={4}
          value={value}
          onInput={(v) => set("value", v)}
        />
        <FormActions error={error} onCancel={onClose} submitLabel={editing ? "Save key" : "Add key"} disabled={busy} />
      </form>
    </Dialog>
  );
}

export function DeleteKeyDialog({ profile, translation, onClose, onDeleted }: { profile: Profile; translation: TranslationKey | null; onClose: () => void; onDeleted: (k: TranslationKey) => Promise<void> | void }) {
  return (
    <ConfirmDialog
      open={translation !== null}
      title={`Delete key ${translation?.key ?? ""}?`}
      message={
        <p>
          SDKs asking for it in <span class="mono">{profile.locale}</span> get the fallback locale's text (or the key itself) with the next snapshot.
        </p>
      }
      confirmLabel="Delete key"
      danger
      onConfirm={async () => {
        const gone = translation!;
        await call(i18nApi.api.admin.i18n.keys({ key: gone.key }).delete({ profile_id: profile.id }));
        await onDeleted(gone);
      }}
      onClose={onClose}
    />
  );
}
