import type { ComponentChildren } from "preact";

/**
 * The kit's tables: every list, history, activity and numbers table of the
 * dashboard is one of these, so each has a caption (hidden unless it helps
 * sighted readers too), column headers with `scope`, an optional row header
 * and a last actions column whose header is hidden.
 */

export type Column<T> = { header: string; cell: (item: T) => ComponentChildren; class?: string; style?: Record<string, string> };

/** A table whose rows the caller draws (rows that are components of their own, e.g. an editor's). */
export function Table(props: { caption: ComponentChildren; captionShown?: boolean; class?: string; headers: readonly string[]; actions?: boolean; children: ComponentChildren }) {
  return (
    <table class={props.class}>
      <caption class={props.captionShown ? undefined : "visually-hidden"}>{props.caption}</caption>
      <thead>
        <tr>
          {props.headers.map((h) => (
            <th scope="col" key={h}>
              {h}
            </th>
          ))}
          {props.actions && (
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}

export type DataTableProps<T> = {
  caption: ComponentChildren;
  captionShown?: boolean;
  class?: string;
  rows: readonly T[];
  rowKey: (item: T) => string;
  /** A first cell that heads its row (`th scope="row"`): its header, the cell and its class. */
  rowHeader?: { header: string; cell: (item: T) => ComponentChildren; class?: string };
  columns: readonly Column<T>[];
  /** Row actions (edit, delete, roll back…), a last column with a hidden header; left out when not given. */
  actions?: ((item: T) => ComponentChildren) | false;
};

/** A table of `rows`, one cell per column. */
export function DataTable<T>(props: DataTableProps<T>) {
  const headers = [...(props.rowHeader ? [props.rowHeader.header] : []), ...props.columns.map((c) => c.header)];
  return (
    <Table caption={props.caption} captionShown={props.captionShown} class={props.class} headers={headers} actions={Boolean(props.actions)}>
      {props.rows.map((item) => (
        <tr key={props.rowKey(item)}>
          {props.rowHeader && (
            <th scope="row" class={props.rowHeader.class}>
              {props.rowHeader.cell(item)}
            </th>
          )}
          {props.columns.map((c) => (
            <td key={c.header} class={c.class} style={c.style}>
              {c.cell(item)}
            </td>
          ))}
          {props.actions && <td>{props.actions(item)}</td>}
        </tr>
      ))}
    </Table>
  );
}

/** A table of facts about one thing (label, value), e.g. "About this item"; a row that is false is left out. */
export function FactsTable({ caption, rows }: { caption: string; rows: readonly (readonly [label: string, value: ComponentChildren, cellClass?: string] | false | null | undefined | "")[] }) {
  return (
    <table>
      <caption class="visually-hidden">{caption}</caption>
      <tbody>
        {rows.map(
          (row) =>
            row && (
              <tr key={row[0]}>
                <th scope="row">{row[0]}</th>
                <td class={row[2]}>{row[1]}</td>
              </tr>
            ),
        )}
      </tbody>
    </table>
  );
}

/** A row's buttons, each named for the row it acts on ("Delete template beta"); `danger` for a delete; false leaves one out. */
export function RowButtons({ buttons }: { buttons: readonly ({ text: ComponentChildren; label: string; onClick: () => void; danger?: boolean; disabled?: boolean } | false | null | undefined)[] }) {
  return (
    <div class="row">
      {buttons.map(
        (b) =>
          b && (
            <button key={b.label} type="button" class={b.danger ? "danger secondary small" : "secondary small"} aria-label={b.label} disabled={b.disabled} onClick={b.onClick}>
              {b.text}
            </button>
          ),
      )}
    </div>
  );
}
