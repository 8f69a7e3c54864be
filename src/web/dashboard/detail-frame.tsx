import type { ComponentChildren, JSX } from "preact";
import { useState } from "preact/hooks";
import { type Column, DataTable } from "./data-table";
import { type DashboardPage, type EmptyGuide, type NavGroup, useSession } from "./registry";
import { navigate } from "./router";
import { describeError } from "./api";
import { ConfirmDialog, EnvTabs, ErrorMessage, Link, Loading, Status, When, useLoad } from "./ui";

/**
 * The kit's detail page: the crumb back to its list, the heading (a name and
 * what stands beside it), the head's buttons for those who may write, the
 * description and a muted line of facts, the page's error and status lines,
 * and the danger zone: "Delete <noun>" that asks first and then goes back to
 * the list. Every feature's detail page is one of these, so they read and
 * behave alike (ResourceList is the list page's counterpart).
 */

/** Delete: the frame's own confirmation (title, words, the call), or a dialog the page holds itself (`open`). */
export type DangerZone = { noun: string; title: string; message: ComponentChildren; run: () => Promise<unknown> } | { noun: string; open: () => void };

export type DetailFrameProps = {
  back: { href: string; label: string };
  title: ComponentChildren;
  description?: ComponentChildren;
  /** A muted line under the description (kind, env, who made it and when…). */
  meta?: ComponentChildren;
  /** The person may write: the head's buttons and the danger zone show only then. */
  writable: boolean;
  /** Buttons of the head before Delete (Pause, Edit…). */
  actions?: ComponentChildren;
  /** Delete, when this thing can be deleted now; false or absent: no Delete button. */
  danger?: DangerZone | false | null;
  /** A failure of the page's own actions and what the last one did. */
  error?: string | null;
  message?: string | null;
  children?: ComponentChildren;
};

export function DetailFrame(props: DetailFrameProps) {
  const [deleting, setDeleting] = useState(false);
  const danger = props.writable ? props.danger : null;
  const head = props.writable && (props.actions || danger);
  return (
    <>
      <p class="crumbs">
        <Link href={props.back.href}>{props.back.label}</Link> /
      </p>
      <div class="page-head">
        <h1>{props.title}</h1>
        {head && (
          <div class="row">
            {props.actions}
            {danger && (
              <button type="button" class="danger secondary" onClick={() => ("open" in danger ? danger.open() : setDeleting(true))}>
                Delete {danger.noun}
              </button>
            )}
          </div>
        )}
      </div>
      {props.description && <p>{props.description}</p>}
      {props.meta && <p class="muted small">{props.meta}</p>}
      {props.error !== undefined && <ErrorMessage error={props.error} />}
      {props.message !== undefined && <Status message={props.message} />}
      {props.children}
      {danger && "run" in danger && (
        <ConfirmDialog
          open={deleting}
          title={danger.title}
          message={danger.message}
          confirmLabel={`Delete ${danger.noun}`}
          danger
          onConfirm={async () => {
            await danger.run();
            navigate(props.back.href);
          }}
          onClose={() => setDeleting(false)}
        />
      )}
    </>
  );
}

/** The usual danger zone: "Delete <noun>", asking "Delete <name>?" with what deleting does (`what`). */
export const deleteZone = (noun: string, name: string, what: string, run: () => Promise<unknown>): DangerZone => ({ noun, title: `Delete ${name}?`, message: <p>{what}</p>, run });

/** What a detail page shows before its thing has loaded: the failure, or "Loading…"; null once there is data. */
export function notLoaded(load: { error: string | null; data: unknown }): JSX.Element | null {
  if (load.data !== undefined && load.data !== null) return null;
  return load.error ? <ErrorMessage error={load.error} /> : <Loading />;
}

/**
 * Per-env tabs and the panel under them (the ARIA tabs pattern): the panel's
 * id is `${idBase}-panel`, labelled by the selected tab.
 */
export function EnvPanel<E extends string>(props: { envs: readonly E[]; current: E; idBase: string; onSelect: (env: E) => void; label: (env: E) => ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      <EnvTabs envs={props.envs} current={props.current} idBase={props.idBase} onSelect={props.onSelect} label={props.label} />
      <section role="tabpanel" id={`${props.idBase}-panel`} aria-labelledby={`${props.idBase}-${props.current}`}>
        {props.children}
      </section>
    </>
  );
}

type Version = { env: string; version: number; action: string; actorEmail: string; createdAt: string };

/**
 * Published versions, newest first: [env], version, the change (the audit
 * action without its `prefix`), the page's own columns, who and when, and
 * "Roll back" on every version but the current one when `onRollback` is given.
 */
export function VersionHistory<H extends Version>(props: {
  caption: string;
  rows: readonly H[];
  prefix: string;
  withEnv?: boolean;
  columns: readonly Column<H>[];
  current: (h: H) => number;
  onRollback?: ((h: H) => void) | false;
}) {
  const { onRollback } = props;
  const columns: Column<H>[] = [
    ...(props.withEnv ? [{ header: "Env", cell: (h: H) => h.env }] : []),
    { header: "Version", cell: (h) => h.version },
    { header: "Change", cell: (h) => h.action.replace(props.prefix, "") },
    ...props.columns,
    { header: "Who", cell: (h) => h.actorEmail },
    { header: "When", cell: (h) => <When iso={h.createdAt} /> },
  ];
  return (
    <DataTable
      caption={props.caption}
      rows={props.rows}
      rowKey={(h) => `${h.env}:${h.version}`}
      columns={columns}
      actions={
        onRollback &&
        ((h) =>
          h.version !== props.current(h) && (
            <button type="button" class="secondary small" aria-label={`Roll back ${h.env} to version ${h.version}`} onClick={() => onRollback(h)}>
              Roll back
            </button>
          ))
      }
    />
  );
}

/**
 * A list page's "New …" dialog that opens the new thing's page once made:
 * `open` for the button, `dialog` spread on the dialog (open, onClose, onCreated).
 */
export function useCreateThenOpen<T>(href: (made: T) => string) {
  const [creating, setCreating] = useState(false);
  return {
    open: () => setCreating(true),
    dialog: {
      open: creating,
      onClose: () => setCreating(false),
      onCreated: (made: T) => {
        setCreating(false);
        navigate(href(made));
      },
    },
  };
}

/** What an overview card says: a count that links to the list, and a muted line after it. */
export type CardText = { href: string; count: number; label: string; more?: string };

/** A module's card on the overview: loads once per project, then the count and its words. */
export function overviewCard<T>(load: () => Promise<T>, text: (data: T) => CardText): () => JSX.Element {
  return function OverviewCard() {
    const session = useSession();
    const { data } = useLoad(load, [session.project.id]);
    if (data === undefined) return <Loading />;
    const t = text(data);
    return (
      <>
        <Link href={t.href}>
          <strong>{t.count}</strong> {t.label}
        </Link>
        {t.more && <span class="muted"> · {t.more}</span>}
      </>
    );
  };
}

/** "1 experiment", "3 experiments". */
export const countOf = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * What a change that went through left to heed ("published with warnings"): a warning, in the warning colour and
 * announced, never in the green of the status line that says the change was made.
 */
export function WarningMessage({ title, warnings }: { title: string; warnings: readonly string[] | null | undefined }) {
  if (!warnings?.length) return null;
  return (
    <div class="warning" role="alert">
      <strong>{title}</strong>
      <ul>
        {warnings.map((w) => (
          <li key={w}>{w}</li>
        ))}
      </ul>
    </div>
  );
}

/**
 * A feature's two pages: its list at `path` (in the navigation at `order`) and one thing's page at
 * `path/:param`, titled `one(value)`.
 */
export function listAndDetail(o: { path: string; title: string; order: number; group: NavGroup; empty?: EmptyGuide; list: () => JSX.Element; param: string; one: (value: string) => string; detail: (value: string) => JSX.Element }): DashboardPage[] {
  return [
    { path: o.path, title: o.title, nav: { label: o.title, order: o.order, group: o.group }, ...(o.empty ? { empty: o.empty } : {}), view: o.list },
    { path: `${o.path}/:${o.param}`, title: (p) => o.one(p[o.param]!), view: ({ params }) => o.detail(params[o.param]!) },
  ];
}

/**
 * A page's own actions on its thing (approve, resolve, reject…): which one is under way (`busy`, by key), what the
 * last one did (`message`, said once the page has reloaded) or why it failed (`error`; the failure is thrown on,
 * so a confirmation dialog that ran it stays open with it).
 */
export function useActions<K>(reload: () => Promise<unknown>) {
  const [busy, setBusy] = useState<K | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (key: K, work: () => Promise<unknown>, said: string) => {
    setBusy(key);
    try {
      await work();
      await reload();
      setError(null);
      setMessage(said);
    } catch (err) {
      setError(describeError(err));
      throw err;
    } finally {
      setBusy(null);
    }
  };
  return { busy, message, setMessage, error, run };
}
