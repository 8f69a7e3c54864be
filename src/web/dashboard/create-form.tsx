import { useState } from "preact/hooks";
import { ApiFailure, describeError } from "./api";
import { Field, errorsByField, focusFirstInvalid } from "./ui";

/**
 * The kit's pieces of a dialog's form: the name and description a "New …"
 * dialog starts with (a bad or taken name said on the name field), and the
 * submit of a form whose refusal is split over its fields.
 */

/** A refusal about the name (bad or taken): said on the name field rather than above the buttons. */
const aboutName = (err: unknown) => err instanceof ApiFailure && (err.code === "VALIDATION" || err.code === "CONFLICT" || err.status === 409) && /name/i.test(`${err.message} ${err.detail ?? ""}`);

/**
 * A "New …" dialog's state: name, description, the name's own error (when
 * `nameOnField`), the general error and busy; `submit` makes it with
 * `create`, empties the form (and calls `reset` for the page's own fields),
 * then hands the new name to `onCreated`.
 */
export function useNameForm(opts: { create: (input: { name: string; description: string | undefined }) => Promise<{ name: string }>; onCreated: (name: string) => void; nameOnField?: boolean; reset?: () => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [nameError, setNameError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const created = await opts.create({ name: name.trim(), description: description.trim() || undefined });
      setName("");
      setDescription("");
      opts.reset?.();
      setNameError(null);
      setError(null);
      opts.onCreated(created.name);
    } catch (err) {
      if (opts.nameOnField && aboutName(err)) {
        setNameError(describeError(err));
        setError(null);
      } else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return { name, setName, description, setDescription, nameError, error, busy, submit };
}

/** The Name (with its hint and error) and Description fields of a "New …" dialog. */
export function NameFields({ form, hint }: { form: ReturnType<typeof useNameForm>; hint: string }) {
  return (
    <>
      <Field label="Name" error={form.nameError} hint={hint}>
        {(attrs) => <input {...attrs} required value={form.name} onInput={(e) => form.setName((e.target as HTMLInputElement).value)} autoComplete="off" />}
      </Field>
      <Field label="Description">{(attrs) => <input {...attrs} value={form.description} onInput={(e) => form.setDescription((e.target as HTMLInputElement).value)} />}</Field>
    </>
  );
}

/**
 * The submit of a dialog's form whose refusal names its fields: one request
 * at a time (`busy`), the parts naming one of `fields` on that field, the
 * rest above the buttons, and the focus on the first field it marked.
 */
export function useFieldSubmit<F extends string>(fields: readonly F[]) {
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<F, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** A refusal found before any request (a field that is not JSON…): on its field. */
  const refuse = (field: F, message: string) => {
    setFieldErrors({ [field]: message } as Partial<Record<F, string>>);
    setError(null);
    focusFirstInvalid();
  };
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    try {
      await work();
    } catch (err) {
      const split = errorsByField(err, fields);
      setFieldErrors(split.fields);
      setError(split.general);
      focusFirstInvalid();
    } finally {
      setBusy(false);
    }
  };
  const clear = () => {
    setFieldErrors({});
    setError(null);
  };
  return { fieldErrors, error, busy, refuse, run, clear };
}
