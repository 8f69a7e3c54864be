import { STORE_BOOKKEEPING_TABLES } from "./core-migrations";
import type { Store } from "./types";

type TableInfo = { name: string; references: string[] };

async function tablesOf(store: Store): Promise<TableInfo[]> {
  if (store.engine === "sqlite") {
    const tables = await store.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const out: TableInfo[] = [];
    for (const { name } of tables) {
      const refs = await store.all<{ ref: string }>("SELECT DISTINCT \"table\" AS ref FROM pragma_foreign_key_list(?)", name);
      out.push({ name, references: refs.map((r) => r.ref) });
    }
    return out;
  }
  const tables = await store.all<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename");
  const refs = await store.all<{ t: string; ref: string }>(
    `SELECT c.relname AS t, r.relname AS ref FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE k.contype = 'f' AND n.nspname = current_schema()`,
  );
  return tables.map(({ name }) => ({ name, references: refs.filter((r) => r.t === name).map((r) => r.ref) }));
}

/** Tables ordered so that every table comes after the ones it references. */
function dependencyOrder(tables: TableInfo[]): string[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const done = new Set<string>();
  const out: string[] = [];
  const visit = (name: string, path: Set<string>) => {
    if (done.has(name) || path.has(name)) return;
    path.add(name);
    for (const ref of byName.get(name)?.references ?? []) if (ref !== name) visit(ref, path);
    done.add(name);
    out.push(name);
  };
  for (const t of tables) visit(t.name, new Set());
  return out;
}

async function countRows(store: Store, table: string): Promise<number> {
  const row = await store.one<{ n: number | string }>(`SELECT CAST(COUNT(*) AS INTEGER) AS n FROM "${table}"`);
  return Number(row?.n ?? 0);
}

export type CopyProgress = (table: string, rows: number) => void;

export class CopyRefused extends Error {}

/**
 * Copies every table of `source` into `target` (both migrated to the same
 * schema), in one transaction on the target, then checks the row counts.
 * Refuses a target that holds any data.
 */
export async function copyStore(source: Store, target: Store, progress: CopyProgress = () => {}): Promise<Record<string, number>> {
  const sourceTables = dependencyOrder(await tablesOf(source)).filter((t) => !STORE_BOOKKEEPING_TABLES.has(t));
  const targetTables = new Set((await tablesOf(target)).map((t) => t.name));
  const missing = sourceTables.filter((t) => !targetTables.has(t));
  if (missing.length > 0) throw new CopyRefused(`the target has no table ${missing.join(", ")}: are both stores migrated by the same svc?`);
  for (const table of targetTables) {
    if (STORE_BOOKKEEPING_TABLES.has(table)) continue;
    if ((await countRows(target, table)) > 0) throw new CopyRefused(`the target is not empty (table ${table} has rows); copy only into a new, empty database`);
  }
  const counts: Record<string, number> = {};
  await target.write(async (tx) => {
    await tx.lock("svc:copy");
    for (const table of sourceTables) {
      const rows = await source.all<Record<string, unknown>>(`SELECT * FROM "${table}"`);
      counts[table] = rows.length;
      if (rows.length > 0) {
        const columns = Object.keys(rows[0]!);
        const perBatch = Math.max(1, Math.floor(30_000 / columns.length));
        for (let i = 0; i < rows.length; i += perBatch) {
          const batch = rows.slice(i, i + perBatch);
          const values = batch.map(() => `(${columns.map(() => "?").join(", ")})`).join(", ");
          const params = batch.flatMap((row) => columns.map((c) => normalise(row[c])));
          await tx.run(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(", ")}) VALUES ${values}`, ...params);
        }
      }
      progress(table, rows.length);
    }
    if (target.engine === "postgres") {
      // Identity columns were given explicit values: move their sequences past them.
      const identities = await tx.all<{ t: string; c: string }>(
        "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE is_identity = 'YES' AND table_schema = current_schema()",
      );
      for (const { t, c } of identities) {
        if (STORE_BOOKKEEPING_TABLES.has(t)) continue;
        await tx.one(`SELECT setval(pg_get_serial_sequence('"${t}"', '${c}'), COALESCE((SELECT MAX("${c}") FROM "${t}"), 0) + 1, false)`);
      }
    }
  });
  for (const table of sourceTables) {
    const copied = await countRows(target, table);
    if (copied !== counts[table]) throw new Error(`row count check failed for ${table}: ${counts[table]} in the source, ${copied} in the target`);
  }
  return counts;
}

function normalise(value: unknown): string | number | null | Uint8Array {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Uint8Array) return value;
  if (typeof value === "object") return JSON.stringify(value);
  return value as string | number;
}
