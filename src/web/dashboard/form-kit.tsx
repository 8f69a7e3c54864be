import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ConfirmDialog, Dialog, Field, FormActions, SecretOnce, errorsByField, focusFirstInvalid, focusLater, useLoad, useSecretMint } from "./ui";

/**
 * The kit's form pieces: the state every create/edit dialog holds, the
 * labelled field rows (text, text area, select with its options, check box),
 * and the dialog that mints a secret and shows it once. Each feature's
 * dialog is built from these, so they read (labels, hints, errors tied to
 * their control) and behave (a refusal on the field it names, the focus on
 * the first such field) alike.
 */

/**
 * What a create/edit dialog holds: the form (set afresh from `start` at each
 * opening, or when `deps` change while open), the refusals by field and the
 * rest, and whether a save is under way. `submit(fields, save)` is the form's
 * onSubmit: it runs `save`, and a refusal lands on the `fields` it names
 * (errorsByField, or the form's own splitter), the rest above the buttons,
 * the focus on the first named.
 */
export function useDialogForm<F extends object, N extends string = never>(open: boolean, start: () => F, deps: unknown[]) {
  const [form, setForm] = useState<F>(start);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<N, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!open) return;
    setForm(start());
    setFieldErrors({});
    setError(null);
    // biome-ignore lint: the caller names the dependencies
  }, [open, ...deps]);
  const set = <K extends keyof F>(key: K, value: F[K]) => setForm((f) => ({ ...f, [key]: value }));
  type Split = (err: unknown) => { fields: Partial<Record<N, string>>; general: string | null };
  const submit = (fields: readonly N[] | Split, save: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await save();
    } catch (err) {
      const split = typeof fields === "function" ? fields(err) : errorsByField(err, fields);
      setFieldErrors(split.fields);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };
  return { form, setForm, set, fieldErrors, setFieldErrors, error, setError, busy, submit };
}

/** What every field row takes: its visible label, the refusal tied to it, a hint under it. */
type Row = { label: string; error?: string | null; hint?: string };

/** A labelled one-line text input. */
export function TextField(
  props: Row & { value: string; onInput: (value: string) => void; required?: boolean; class?: string; autoComplete?: string; disabled?: boolean; placeholder?: string },
) {
  const { label, error, hint, onInput, ...input } = props;
  return (
    <Field label={label} error={error} hint={hint}>
      {(attrs) => <input {...attrs} {...input} onInput={(e) => onInput(e.currentTarget.value)} />}
    </Field>
  );
}

/** A labelled text area. */
export function TextAreaField(props: Row & { value: string; onInput: (value: string) => void; rows?: number; required?: boolean; class?: string; disabled?: boolean; placeholder?: string }) {
  const { label, error, hint, onInput, ...area } = props;
  return (
    <Field label={label} error={error} hint={hint}>
      {(attrs) => <textarea {...attrs} {...area} onInput={(e) => onInput(e.currentTarget.value)} />}
    </Field>
  );
}

/** The name row of a create dialog: required, never filled in by the browser. */
export function NameField(props: { value: string; onInput: (value: string) => void; error?: string | null; hint?: string; label?: string; class?: string }) {
  return <TextField label="Name" {...props} required autoComplete="off" />;
}

/** The optional description row (one line). */
export function DescriptionField(props: { value: string; onInput: (value: string) => void; error?: string | null; hint?: string }) {
  return <TextField label="Description" {...props} />;
}

export type Option<V extends string> = { value: V; text: ComponentChildren };

/** `values` with their labels as a select's options. */
export const optionsOf = <V extends string>(values: readonly V[], labels: Record<V, ComponentChildren>): Option<V>[] => values.map((value) => ({ value, text: labels[value] }));

/** Values that are their own labels (envs) as a select's options. */
export const plainOptions = <V extends string>(values: readonly V[]): Option<V>[] => values.map((value) => ({ value, text: value }));

/** A select's options (none while they load). */
export function Options<V extends string>({ options }: { options: readonly Option<V>[] | undefined }) {
  return (
    <>
      {options?.map((o) => (
        <option key={o.value} value={o.value}>
          {o.text}
        </option>
      ))}
    </>
  );
}

/** A labelled select of `options`. */
export function SelectField<V extends string>(props: Row & { value: V; onChange: (value: V) => void; options: readonly Option<V>[]; disabled?: boolean; children?: ComponentChildren }) {
  return (
    <Field label={props.label} error={props.error} hint={props.hint}>
      {(attrs) => (
        <select {...attrs} value={props.value} disabled={props.disabled} onChange={(e) => props.onChange(e.currentTarget.value as V)}>
          {props.children}
          <Options options={props.options} />
        </select>
      )}
    </Field>
  );
}

/** A check box labelled by the sentence after it. */
export function CheckField({ checked, onChange, disabled, children }: { checked: boolean; onChange: (checked: boolean) => void; disabled?: boolean; children: ComponentChildren }) {
  return (
    <label class="check">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.currentTarget.checked)} /> {children}
    </label>
  );
}

/**
 * The dialog that mints a secret (an SDK key, an API token) and shows it
 * once: the form (`children`, the fields) with Cancel and `submitLabel`,
 * then the secret with a copy button and Done. `reset` clears the fields
 * when it closes.
 */
export function MintSecretDialog(props: {
  open: boolean;
  onClose: () => void;
  onMinted: () => Promise<void>;
  mint: () => Promise<string>;
  reset: () => void;
  /** "SDK key": the titles say "New SDK key", "Your new SDK key". */
  what: string;
  submitLabel: string;
  canSubmit?: boolean;
  /** Under the secret, before Done (e.g. where to use it). */
  after?: ComponentChildren;
  children: ComponentChildren;
}) {
  const { secret, error, busy, close, submit } = useSecretMint(props.mint, props.onMinted, () => {
    props.reset();
    props.onClose();
  });
  return (
    <Dialog open={props.open} title={secret ? `Your new ${props.what}` : `New ${props.what}`} onClose={close}>
      {secret ? (
        <>
          <SecretOnce secret={secret} what={props.what} />
          {props.after}
          <div class="actions">
            <button type="button" onClick={close}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          {props.children}
          <FormActions error={error} onCancel={close} submitLabel={props.submitLabel} disabled={busy || props.canSubmit === false} />
        </form>
      )}
    </Dialog>
  );
}

/** A table's head: a column header per name, and a last one named "Actions" for screen readers only when `actions`. */
export function TableHead({ columns, actions }: { columns: readonly string[]; actions?: boolean }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th scope="col" key={c}>
            {c}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="visually-hidden">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  );
}

/** A list row's Remove button, named for its row ("Remove stage 2"); `focusAfter`: the control that takes the focus once the row is gone. */
export function RemoveButton({ label, onRemove, focusAfter, disabled }: { label: string; onRemove: () => void; focusAfter?: string; disabled?: boolean }) {
  return (
    <button
      type="button"
      class="secondary small"
      disabled={disabled}
      aria-label={label}
      onClick={() => {
        onRemove();
        if (focusAfter) focusLater(focusAfter);
      }}
    >
      Remove
    </button>
  );
}

/**
 * What a dialog's selects offer (universes, gates, metrics…), read at each opening: someone may have added one
 * since. Nothing is read while it is closed.
 */
export function useChoices<T>(open: boolean, load: () => Promise<T>) {
  return useLoad(async () => (open ? await load() : undefined), [open]);
}

/** Asks before deleting `item` ("Delete checkout?", the button "Delete <what>"), deletes it with `remove`, then `onDeleted`. */
export function DeleteDialog<T extends { name: string }>(props: { item: T | null; what: string; message: ComponentChildren; remove: (item: T) => Promise<unknown>; onClose: () => void; onDeleted: (item: T) => Promise<void> | void }) {
  return (
    <ConfirmDialog
      open={props.item !== null}
      title={`Delete ${props.item?.name ?? ""}?`}
      message={props.message}
      confirmLabel={`Delete ${props.what}`}
      danger
      onConfirm={async () => {
        const gone = props.item!;
        await props.remove(gone);
        await props.onDeleted(gone);
      }}
      onClose={props.onClose}
    />
  );
}
