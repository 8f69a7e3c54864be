import { UsageError } from "../lib/config";
import { CopyRefused, copyStore } from "../lib/store/copy";
import { StoreUrlError, describeTarget, parseStoreTarget } from "../lib/store";
import type { Command } from "./command";
import { CliError } from "./errors";
import { DATA_FLAG, dataDirOf, openCommandStore } from "./store-option";

/** A store URL flag; a bad one is a usage error naming that flag. */
function targetOf(flag: string, value: string | undefined, dataDir: string) {
  try {
    return parseStoreTarget(value, dataDir);
  } catch (err) {
    if (err instanceof StoreUrlError) throw new UsageError(err.message.replace(/^--store/, flag));
    throw err;
  }
}

const copyCommand: Command = {
  name: "copy",
  summary: "Copy every table from one store into an empty other (SQLite to PostgreSQL, or back)",
  details: [
    "Both stores are brought to this binary's schema first. The target must be empty (a fresh database, or a SQLite file that does not exist yet); the copy is one transaction on the target, and the row count of every table is checked afterwards.",
    "Stop the servers on the source first: writes made during the copy are not carried over.",
  ],
  examples: [
    "svc store copy --from sqlite:./data/service.db --to postgres://svc:secret@db:5432/svc",
    "svc store copy --from postgres://svc:secret@db:5432/svc --to sqlite:./restored/service.db",
  ],
  flags: {
    from: { type: "string", value: "URL", help: "Source store: sqlite:FILE or postgres://… (default: the data directory's service.db)" },
    to: { type: "string", value: "URL", help: "Target store, empty: sqlite:FILE or postgres://… (required)" },
    data: DATA_FLAG,
    json: { type: "boolean", help: "Print {from, to, tables: {name: rows}} as JSON" },
  },
  async run({ values }) {
    if (!values.to) throw new UsageError("--to URL is required (sqlite:FILE or postgres://USER@HOST:PORT/DB)");
    const from = targetOf("--from", values.from as string | undefined, dataDirOf(values));
    const to = targetOf("--to", values.to as string, dataDirOf(values));
    if (describeTarget(from) === describeTarget(to)) throw new UsageError("--from and --to name the same store");
    const source = await openCommandStore(from);
    try {
      const target = await openCommandStore(to);
      try {
        const counts = await copyStore(source, target, (table, rows) => {
          if (!values.json) process.stderr.write(`copied ${table}: ${rows} rows\n`);
        });
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        if (values.json) console.log(JSON.stringify({ from: describeTarget(from), to: describeTarget(to), tables: counts }));
        else console.log(`copied ${total} rows in ${Object.keys(counts).length} tables from ${describeTarget(from)} to ${describeTarget(to)}; row counts match`);
        return 0;
      } catch (err) {
        if (err instanceof CopyRefused) throw new CliError(err.message, "TARGET_NOT_EMPTY", "create a new database (createdb) or name a new SQLite file");
        throw err;
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  },
};

export const storeCommand: Command = {
  name: "store",
  summary: "Move an installation between stores (SQLite and PostgreSQL)",
  examples: ["svc store copy --from sqlite:./data/service.db --to postgres://svc:secret@db:5432/svc"],
  subcommands: [copyCommand],
};
