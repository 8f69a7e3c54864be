import type { Queryable } from "./types";

/**
 * Up to two rows of a project's table whose id starts with `prefix` (one:
 * the prefix is unique; two: it is ambiguous). Compared with `substr`, not
 * LIKE (where `_` and `%` would be wildcards) nor a range (whose order
 * depends on PostgreSQL's collation, which may skip punctuation such as `_`).
 * `table` and `columns` come from the module's own code, never from input.
 */
export function rowsByIdPrefix<T>(q: Queryable, table: string, columns: string, projectId: string, prefix: string): Promise<T[]> {
  return q.all<T>(`SELECT ${columns} FROM ${table} WHERE project_id = ? AND substr(id, 1, ?) = ? ORDER BY id LIMIT 2`, projectId, prefix.length, prefix);
}
