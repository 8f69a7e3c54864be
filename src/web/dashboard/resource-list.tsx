import type { ComponentChildren } from "preact";
import { useContext, useState } from "preact/hooks";
import { type EmptyGuide, PageContext } from "./registry";
import { type Column, DataTable } from "./data-table";
import { Options } from "./form-kit";
import { ErrorMessage, Link, Loading, SearchBox, Status, useLiveReload, useLoad } from "./ui";

/**
 * The kit's list page: crumbs, heading with its "New …" button, an optional
 * intro, search (with filters beside it), error and status lines, loading,
 * the empty states and the table (row header, columns, an actions column).
 * Every feature's list page is one of these, so they look, read (accessible
 * names, captions) and behave alike.
 */

/** A list that reloads itself every few seconds, as every list page does. */
export function useLiveList<T>(load: () => Promise<T[]>, deps: unknown[]) {
  const list = useLoad(load, deps);
  useLiveReload(list.reload);
  return list;
}

/**
 * What a list page with row dialogs holds: the create/edit dialog (the row
 * it edits, or none for a new one), the row being deleted, and the status
 * line that says what the last change did once the list has reloaded.
 */
export function useRowDialogs<T>(reload: () => Promise<unknown>) {
  const [dialog, setDialog] = useState<{ editing: T | null } | null>(null);
  const [deleting, setDeleting] = useState<T | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // What a row action (approve, restore…) failed with; the next change done clears it.
  const [error, setError] = useState<string | null>(null);
  return {
    /** The create/edit dialog's open, editing and onClose. */
    dialog: { open: dialog !== null, editing: dialog?.editing ?? null, onClose: () => setDialog(null) },
    create: () => setDialog({ editing: null }),
    edit: (item: T) => setDialog({ editing: item }),
    /** Closes the create/edit dialog after a save; gives the row it edited (null: it created one). */
    closeDialog: () => {
      setDialog(null);
      return dialog?.editing ?? null;
    },
    deleting,
    remove: (item: T) => setDeleting(item),
    closeDelete: () => setDeleting(null),
    message,
    error,
    setError,
    /** After a change: reload the list, then say what happened. */
    done: async (text: string) => {
      await reload();
      setError(null);
      setMessage(text);
    },
  };
}

export type { Column } from "./data-table";

export type ResourceListProps<T> = {
  /** The trail above the heading (a list under another page, e.g. Gates /). */
  crumbs?: ComponentChildren;
  /** The page heading, e.g. "Configs". */
  title: ComponentChildren;
  /** One of them, e.g. "config" (empty and no-match lines). */
  noun: string;
  /** Several, when not `${noun}s`. */
  plural?: string;
  intro?: ComponentChildren;
  /** A warning between the intro and the search (e.g. a module turned off). */
  notice?: ComponentChildren;
  /** What useLoad/useLiveList gave. */
  items: readonly T[] | undefined;
  error: string | null | undefined;
  message?: string | null;
  /** The button that makes one; false when the person may not (the heading keeps its row); not given at all on a page that makes none (a plain heading). */
  create?: { label: string; onClick: () => void } | false;
  /** Other buttons of the heading (a page with more than its one New button); false when the person may not. */
  headActions?: ComponentChildren;
  /** The text a search matches (case-insensitive substring); no search box without it or `search`. */
  searchText?: (item: T) => readonly (string | null | undefined)[];
  /** A search the page holds itself (the server filters): the box shows it, the kit filters nothing. */
  search?: { value: string; onInput: (q: string) => void };
  /** The search box's accessible name, when not "Search <plural>". */
  searchLabel?: string;
  /** Selects beside the search box, in one row with it (class "row", or `filtersClass`). */
  filters?: ComponentChildren;
  filtersClass?: string;
  /** A line between the search and the error line (e.g. "2 events are pending approval."). */
  afterSearch?: ComponentChildren;
  /** The table's caption for screen readers. */
  caption: string;
  rowKey: (item: T) => string;
  /** The first cell of a row (a row header): usually NameCell. */
  name: (item: T) => ComponentChildren;
  nameHeader?: string;
  /** The row header's class (e.g. "mono" when the name is an identifier). */
  nameClass?: string;
  /** Rows drawn at most (a list that may hold thousands): a note says so and that the search narrows. */
  limit?: number;
  columns: readonly Column<T>[];
  /** Row actions (edit, delete…), a last column with a hidden header; left out when not given. */
  actions?: ((item: T) => ComponentChildren) | false;
  /**
   * Shown instead of the table when there are none at all (default: "No configs yet."); or what the thing is for and
   * the command that makes the first (`{about, command}`; by default the page's declared `empty`).
   */
  empty?: ComponentChildren | EmptyGuide;
  /** Dialogs and anything else the page adds after the table. */
  children?: ComponentChildren;
};

export function ResourceList<T>(props: ResourceListProps<T>) {
  const [ownQ, setOwnQ] = useState("");
  const [q, setQ] = props.search ? [props.search.value, props.search.onInput] : [ownQ, setOwnQ];
  const plural = props.plural ?? `${props.noun}s`;
  const needle = q.toLowerCase();
  const shown = props.items?.filter((item) => !q || !props.searchText || props.searchText(item).some((text) => (text ?? "").toLowerCase().includes(needle)));
  // The page's own words for an empty list, unless the list is empty because of a search the server ran.
  const declared = useContext(PageContext)?.empty;
  const pageGuide = props.search?.value ? undefined : declared;
  const searchBox = (props.searchText || props.search) && <SearchBox label={props.searchLabel ?? `Search ${plural}`} value={q} onInput={setQ} />;
  return (
    <>
      {props.crumbs && <p class="crumbs">{props.crumbs}</p>}
      {props.create === undefined && props.headActions === undefined ? (
        <h1>{props.title}</h1>
      ) : (
        <div class="page-head">
          <h1>{props.title}</h1>
          {props.create && (
            <button type="button" onClick={props.create.onClick}>
              {props.create.label}
            </button>
          )}
          {props.headActions}
        </div>
      )}
      {props.intro && <p class="muted">{props.intro}</p>}
      {props.notice}
      {props.filters ? (
        <div class={props.filtersClass ?? "row"}>
          {searchBox}
          {props.filters}
        </div>
      ) : (
        searchBox
      )}
      {props.afterSearch}
      <ErrorMessage error={props.error} />
      {props.message !== undefined && <Status message={props.message} />}
      {/* Each state in a slot of its own, never a fragment: a fragment taking a
          slot's place makes Preact move the dialogs after it, and a moved
          <dialog> closes (a secret shown once would be lost). */}
      {!props.items || !shown ? (
        !props.error && <Loading />
      ) : (
        shown.length === 0 &&
        (props.items.length === 0 ? (
          <EmptyState line={isGuide(props.empty) ? undefined : props.empty} plural={plural} guide={isGuide(props.empty) ? props.empty : pageGuide} create={props.create} />
        ) : (
          <p class="muted">{`No ${props.noun} matches “${q}”.`}</p>
        ))
      )}
      {props.limit !== undefined && shown && shown.length > props.limit && (
        <p class="muted" role="note">
          Showing {props.limit} of {shown.length.toLocaleString("en")} {plural}; search to narrow them down.
        </p>
      )}
      {props.items && shown && shown.length > 0 && (
        // Wide tables scroll inside their own box on a phone, never the page.
        <div class="table-scroll">
        <DataTable
          caption={props.caption}
          rows={props.limit === undefined ? shown : shown.slice(0, props.limit)}
          rowKey={props.rowKey}
          rowHeader={{ header: props.nameHeader ?? "Name", cell: props.name, class: props.nameClass }}
          columns={props.columns}
          actions={props.actions}
        />
        </div>
      )}
      {props.children}
    </>
  );
}

const isGuide = (value: unknown): value is EmptyGuide => typeof value === "object" && value !== null && "about" in value && !("props" in value);

/** An empty list: the line saying so, what the thing is for, and how to make the first (the button above, or a command). */
function EmptyState(props: { line: ComponentChildren; plural: string; guide: EmptyGuide | undefined; create: ResourceListProps<unknown>["create"] }) {
  const { guide, create } = props;
  return (
    <div class="empty-guide">
      <p class="muted">{props.line ?? `No ${props.plural} yet.`}</p>
      {guide && <p>{guide.about}</p>}
      {guide && (create || guide.command) && (
        <p>
          {create ? (
            <>
              Make the first with <strong>{create.label}</strong>
              {guide.command ? ", or from a terminal:" : "."}
            </>
          ) : (
            guide.command && (/^svc |^npm /.test(guide.command) ? "Make the first from a terminal:" : "Make the first from your code:")
          )}
        </p>
      )}
      {guide?.command && (
        <pre class="command">
          <code>{guide.command}</code>
        </pre>
      )}
    </div>
  );
}

/**
 * A select beside the search that narrows the list, labelled by its visible text ("Status Any…"); "" is any.
 * `bare`: no visible label, the select named by `label` alone, its first option `any` ("Any status").
 */
export function FilterSelect({ label, value, onChange, options, bare, any = "Any" }: { label: string; value: string; onChange: (value: string) => void; options: readonly { value: string; text: string }[]; bare?: boolean; any?: string }) {
  const select = (
    <select aria-label={bare ? label : undefined} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      <option value="">{any}</option>
      <Options options={options} />
    </select>
  );
  if (bare) return select;
  return (
    <label>
      {label} {select}
    </label>
  );
}

/** A row's name cell: the link to its page (when it has one) and its description under it. */
export function NameCell({ href, name, description }: { href?: string; name: ComponentChildren; description?: string | null }) {
  return (
    <>
      {href ? <Link href={href}>{name}</Link> : name}
      {description && <div class="muted small">{description}</div>}
    </>
  );
}
