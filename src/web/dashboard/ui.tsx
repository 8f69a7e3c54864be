import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ENVS, type Env } from "../../lib/envs";
import { ApiFailure, describeError } from "./api";
import { followLink } from "./router";

/**
 * A dependency as hooks compare it (Object.is): a Date by its time. Eden hands ISO times over as Date objects, a new
 * one on every poll, so `updatedAt` as a dependency reloaded on every poll instead of when the thing changed.
 */
const depValue = (d: unknown): unknown => (d instanceof Date ? d.getTime() : d);

/** Loads data for a page; `reload` refetches (after a write, or when someone else changed it). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | null; loading: boolean; reload: () => Promise<void> } {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  // Loads are numbered as they start. An answer is shown unless it is for earlier deps (`since`: the first load of the
  // current ones) or a later load's answer is shown already. Not "only the last load started": a live reload asking
  // again while the answer for a new search was on its way threw that answer away, and with answers slower than the
  // reload's period no answer was ever shown.
  const started = useRef(0);
  const shown = useRef(0);
  const since = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++started.current;
    // Whether this answer goes on screen (and is then the one shown).
    const show = () => {
      if (mine < since.current || mine <= shown.current) return false;
      shown.current = mine;
      return true;
    };
    try {
      const value = await load();
      if (show()) {
        setData(value);
        setError(null);
        setLoading(false);
      }
    } catch (err) {
      if (show()) {
        setError(describeError(err));
        setLoading(false);
      }
    }
    // biome-ignore lint: the caller names the dependencies
  }, deps.map(depValue));
  useEffect(() => {
    since.current = started.current + 1;
    setLoading(true);
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/**
 * Live updates: reloads every few seconds while the tab is visible and no
 * dialog is open, so a toggle made elsewhere shows up without a refresh.
 */
export function useLiveReload(reload: () => Promise<void>, everyMs = 3000): void {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible" && !document.querySelector("dialog[open]")) void reload();
    }, everyMs);
    return () => clearInterval(timer);
  }, [reload, everyMs]);
}

export function Link(props: { href: string; children: ComponentChildren; class?: string; "aria-current"?: "page" | undefined; "aria-label"?: string }) {
  return (
    <a {...props} onClick={(e) => followLink(e as unknown as MouseEvent, props.href)}>
      {props.children}
    </a>
  );
}

/** A failure the person must notice: announced by screen readers at once. */
export function ErrorMessage({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

/** A polite announcement of what just happened ("Turned checkout on in prod"). */
export function Status({ message }: { message: string | null }) {
  return (
    <p class="status" role="status" aria-live="polite">
      {message ?? ""}
    </p>
  );
}

/**
 * An on/off control that says what it acts on: `label` is e.g. "checkout on prod". `words` name the two states
 * when "on" / "off" would read backwards (a killswitch: "killed" / "live"); `danger` colours "on" as danger.
 */
export function Switch({ checked, label, onChange, disabled, words = ["on", "off"], danger }: { checked: boolean; label: string; onChange: (next: boolean) => void; disabled?: boolean; words?: readonly [on: string, off: string]; danger?: boolean }) {
  return (
    <button type="button" role="switch" class={danger ? "switch switch-danger" : "switch"} aria-checked={checked} aria-label={label} disabled={disabled} onClick={() => onChange(!checked)}>
      <span class="switch-track" aria-hidden="true">
        <span class="switch-thumb" />
      </span>
      <span class="switch-text" aria-hidden="true">
        {checked ? words[0] : words[1]}
      </span>
    </button>
  );
}

/** A real modal dialog (the browser's <dialog>): focus moves in, Escape closes, the page behind is inert. */
export function Dialog({ open, title, onClose, children, wide }: { open: boolean; title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Opened after the paint, in the same flush as the forms' own effects that set their fields afresh at each opening
  // (useDialogForm): opened any sooner, a person (or a test) could type into a field those effects then wipe.
  useEffect(() => {
    const dialog = ref.current;
    if (open && dialog && !dialog.open) dialog.showModal();
  }, [open]);
  // Closed in the commit that says `open` is false, not after the next paint: a page that closes its dialog and then
  // says what the change did ("Deleted …") showed that line for a frame while the dialog still held the page inert,
  // and what was typed into the page then went nowhere.
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (!open && dialog?.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} class={wide ? "wide" : undefined} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

/** Asks before a change that matters (prod, deletes, revokes). */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void> | void;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (props.open) setError(null);
  }, [props.open]);
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
      props.onClose();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onClose}>
      <div class="dialog-body">{props.message}</div>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onClose}>
          Cancel
        </button>
        <button type="button" class={props.danger ? "danger" : undefined} disabled={busy} onClick={confirm}>
          {props.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

/**
 * The foot of a dialog's form: the refusal that names no field (announced),
 * Cancel, and the submit button (`danger` for a stop or a delete).
 */
export function FormActions({ error, onCancel, submitLabel, disabled, danger }: { error: string | null | undefined; onCancel: () => void; submitLabel: ComponentChildren; disabled?: boolean; danger?: boolean }) {
  return (
    <>
      <ErrorMessage error={error} />
      <div class="actions">
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" class={danger ? "danger" : undefined} disabled={disabled}>
          {submitLabel}
        </button>
      </div>
    </>
  );
}

/** After a refusal is shown, the first field it named takes the focus (once the dialog has re-rendered), so the fix starts there. */
export function focusFirstInvalid(): void {
  setTimeout(() => document.querySelector<HTMLElement>('dialog[open] [aria-invalid="true"]')?.focus(), 0);
}

/** A labelled input whose error is tied to it (aria-invalid + aria-describedby) and announced. */
export function Field(props: {
  label: string;
  error?: string | null;
  hint?: string;
  children: (attrs: { id: string; "aria-invalid"?: "true"; "aria-describedby"?: string }) => JSX.Element;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [props.hint ? hintId : null, props.error ? errorId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children({ id, "aria-invalid": props.error ? "true" : undefined, "aria-describedby": describedBy })}
      {props.hint && (
        <p class="hint" id={hintId}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="error" id={errorId} role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}

/** Copies a value (a secret shown once, an id) and says so. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary small"
      aria-label={label}
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
    >
      {copied ? "Copied" : "Copy"}
    </button>
  );
}

/** A search box that filters a list as you type. */
export function SearchBox({ label, value, onInput }: { label: string; value: string; onInput: (value: string) => void }) {
  return <input type="search" class="search" aria-label={label} placeholder={`${label}…`} value={value} onInput={(e) => onInput((e.target as HTMLInputElement).value)} />;
}

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** "3 minutes ago", with the exact time on hover and for assistive technology. */
export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">never</span>;
  const seconds = Math.round((new Date(iso).getTime() - Date.now()) / 1000);
  const abs = Math.abs(seconds);
  const text =
    abs < 60 ? RELATIVE.format(seconds, "second") : abs < 3600 ? RELATIVE.format(Math.round(seconds / 60), "minute") : abs < 86400 ? RELATIVE.format(Math.round(seconds / 3600), "hour") : RELATIVE.format(Math.round(seconds / 86400), "day");
  return (
    <time dateTime={iso} title={new Date(iso).toLocaleString()}>
      {text}
    </time>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

/** A secret shown once (a new key or token): the value, a copy button, and a plain warning. */
export function SecretOnce({ secret, what }: { secret: string; what: string }) {
  return (
    <div>
      <p>
        <strong>Copy this {what} now.</strong> It is shown only once: svc keeps a hash, never the secret.
      </p>
      <div class="secret">
        <input class="mono secret-value" readOnly value={secret} aria-label={`The new ${what}`} onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <CopyButton text={secret} label={`Copy the new ${what}`} />
      </div>
    </div>
  );
}

/**
 * A refusal split by the field path it names (`stages[1].percent`,
 * `stages.1.minutes` alike, as `stages.1.percent`; a path starts with one of
 * `roots`): those go on their controls, the rest in `general`. A part that
 * names no path belongs to the one before (a message may hold "; " itself).
 * Each path's text starts with the refusal's message unless `withMessage` is
 * false (a form that shows the message once).
 */
export function errorsByPath(err: unknown, roots: readonly string[], options: { withMessage?: boolean } = {}): { paths: Map<string, string>; general: string | null } {
  const paths = new Map<string, string>();
  if (!(err instanceof ApiFailure) || !err.detail) return { paths, general: describeError(err) };
  const path = new RegExp(`^((?:${roots.join("|")})(?:\\.[A-Za-z0-9]+|\\[\\d+\\])*)\\s*:\\s*([\\s\\S]*)$`);
  const rest: string[] = [];
  let last: string | null = null;
  for (const part of err.detail.split("; ")) {
    const m = path.exec(part);
    if (m) {
      last = m[1]!.replace(/\[(\d+)\]/g, ".$1");
      paths.set(last, paths.has(last) ? `${paths.get(last)}; ${m[2]}` : options.withMessage === false ? m[2]! : `${err.message}: ${m[2]}`);
    } else if (last) paths.set(last, `${paths.get(last)}; ${part}`);
    else rest.push(part);
  }
  return { paths, general: rest.length > 0 || paths.size === 0 ? `${err.message}: ${rest.join("; ") || err.detail}` : null };
}

/** The first message at `path` or under it (`stages.1` finds `stages.1.percent`). */
export function errorAt(paths: Map<string, string>, path: string): string | undefined {
  if (paths.has(path)) return paths.get(path);
  for (const [k, v] of paths) if (k.startsWith(`${path}.`)) return v;
  return undefined;
}

/** A control's ARIA attributes when the refusal (errorsByPath) names its path: invalid, described by the message `id`. */
export function invalidAt(paths: Map<string, string>, path: string, id: string): { "aria-invalid"?: "true"; "aria-describedby"?: string } {
  return errorAt(paths, path) ? { "aria-invalid": "true", "aria-describedby": id } : {};
}

/** The refusal's message at `path` (errorAt) as the alert `id` under its row; nothing when there is none. */
export function PathError(props: { paths: Map<string, string>; path: string; id: string }) {
  const message = errorAt(props.paths, props.path);
  return message ? (
    <p class="error" id={props.id} role="alert">
      {message}
    </p>
  ) : null;
}

/** Focuses the control `id` once the render that adds or moves it is done (a row added, removed or reordered). */
export function focusLater(id: string): void {
  setTimeout(() => document.getElementById(id)?.focus(), 0);
}

/**
 * A refusal of the server split by field: a VALIDATION or conflict detail is
 * `field: message` (or `field.0: …`, several joined by "; "); the parts that
 * name one of `fields` go on that field, the rest (and anything else) in
 * `general`, for an alert above the buttons.
 */
export function errorsByField<F extends string>(err: unknown, fields: readonly F[]): { fields: Partial<Record<F, string>>; general: string | null } {
  const out: Partial<Record<F, string>> = {};
  if (!(err instanceof ApiFailure) || !err.detail) return { fields: out, general: describeError(err) };
  const rest: string[] = [];
  for (const part of err.detail.split("; ")) {
    const m = /^([A-Za-z]+)[^:]*:\s*([\s\S]*)$/.exec(part);
    const field = m && (fields as readonly string[]).includes(m[1]!) ? (m[1] as F) : null;
    if (field && !out[field]) out[field] = `${err.message}: ${part}`;
    else rest.push(part);
  }
  return { fields: out, general: rest.length > 0 ? `${err.message}: ${rest.join("; ")}` : null };
}

/** A page's env filter: a labelled select of each env, after one choice (`empty`) for none, i.e. the page's default. */
export function EnvSelect({ id, value, empty, onChange }: { id: string; value: Env | ""; empty: string; onChange: (env: Env | "") => void }) {
  return (
    <div class="row">
      <label for={id}>Env</label>
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value as Env | "")}>
        <option value="">{empty}</option>
        {ENVS.map((e) => (
          <option key={e} value={e}>
            {e}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * The env tabs of a detail page, in the ARIA tabs pattern: arrows move the
 * selection and the focus with it. The panel that follows has the id
 * `${idBase}-panel` and is labelled by `${idBase}-${current}`.
 */
export function EnvTabs<E extends string>(props: { envs: readonly E[]; current: E; idBase: string; onSelect: (env: E) => void; label: (env: E) => ComponentChildren }) {
  const { envs, current, idBase, onSelect } = props;
  return (
    <div role="tablist" aria-label="Env" class="tabs" id={idBase}>
      {envs.map((e) => (
        <button
          key={e}
          type="button"
          role="tab"
          id={`${idBase}-${e}`}
          aria-selected={e === current}
          aria-controls={`${idBase}-panel`}
          tabIndex={e === current ? 0 : -1}
          onClick={() => onSelect(e)}
          onKeyDown={(k) => {
            const i = envs.indexOf(current);
            const next = k.key === "ArrowRight" ? envs[(i + 1) % envs.length]! : k.key === "ArrowLeft" ? envs[(i + envs.length - 1) % envs.length]! : null;
            if (!next) return;
            onSelect(next);
            document.getElementById(`${idBase}-${next}`)?.focus();
          }}
        >
          {props.label(e)}
        </button>
      ))}
    </div>
  );
}

/**
 * Minting a secret shown once (an SDK key, an API token): one request at a
 * time, the secret kept until the dialog closes, and a reply that arrives
 * after the dialog was closed dropped, so it never shows at the next opening.
 */
export function useSecretMint(mint: () => Promise<string>, onMinted: () => Promise<void>, onClose: () => void) {
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const attempt = useRef(0);
  const close = () => {
    attempt.current++;
    setBusy(false);
    setSecret(null);
    setError(null);
    onClose();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    const mine = ++attempt.current;
    setBusy(true);
    try {
      const minted = await mint();
      if (mine !== attempt.current) return;
      setSecret(minted);
      await onMinted();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return { secret, error, busy, close, submit };
}

/**
 * A short state word in a pill ("firing", "pending", "regressed"): the word
 * carries the meaning, the colour (styles.css, the theme's variables) only repeats it.
 */
export function Badge({ tone = "muted", strong, children }: { tone?: "ok" | "danger" | "accent" | "muted"; strong?: boolean; children: ComponentChildren }) {
  return <span class={`badge badge-${tone}${strong ? " badge-strong" : ""}`}>{children}</span>;
}

/**
 * A list row's Edit and Delete buttons, each named for the row it acts on
 * ("Edit metric checkouts"); `children` go before them (Approve, ...).
 */
export function RowEditDelete({ noun, name, onEdit, onDelete, children }: { noun: string; name: string; onEdit: () => void; onDelete: () => void; children?: ComponentChildren }) {
  return (
    <div class="row">
      {children}
      <button type="button" class="secondary small" aria-label={`Edit ${noun} ${name}`} onClick={onEdit}>
        Edit
      </button>
      <button type="button" class="danger secondary small" aria-label={`Delete ${noun} ${name}`} onClick={onDelete}>
        Delete
      </button>
    </div>
  );
}

/**
 * Who made a change: a key's or token's name when the server knows it (`actorName`), with the raw actor
 * (`admin-key:key_…@keys.local`) on hover; else the email as it is.
 */
export function Actor({ email, name }: { email: string; name?: string | null }) {
  return name ? <span title={email}>{name}</span> : <>{email}</>;
}
