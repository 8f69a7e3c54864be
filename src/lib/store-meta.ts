import type { Migration } from "./db";

/**
 * Facts about the database itself, as key/value rows:
 * - `epoch`: a random tag that every snapshot ETag carries. A restored backup
 *   or a copied file reuses revision numbers for other content; a new epoch
 *   makes every ETag an SDK holds from before stale, so no wrong 304 is given.
 * - `file_identity`: device and inode of the SQLite file the epoch was made
 *   for. A file that was copied, moved or restored has another identity, and
 *   gets a new epoch when it is next opened.
 */
export const storeMetaMigration: Migration = {
  name: "store_meta",
  sql: `
CREATE TABLE store_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
`,
};
