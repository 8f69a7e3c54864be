/**
 * The config schema checker's child process: compiles config schemas and checks values against them, so that
 * neither ever runs in the server's process (schema-checker.ts sends the work over the IPC channel it was started
 * with, and kills this process when a check runs past its time budget). Compiled validators stay cached here, per
 * config id and schema hash, until the process ends.
 *
 * A process, not a worker thread, because what checking runs stays with it: a worker thread ended gives back its
 * heap, but the pages of the binary's code that its VM and ajv ran stay mapped in the server for good (about
 * 4.5 MB of the server's RSS, measured on dist/svc). This process ends with its memory, code pages included.
 */
import { ApiError } from "../../lib/errors";
import { ConfigSchemas, engines } from "./json-schema";
import type { SchemaJob, SchemaReply } from "./schema-checker";

const send = (reply: SchemaReply) => process.send!(reply);

// Run by hand there is no channel to answer on: said by the uncaught error (no console in modules, by rule).
if (!process.send) throw new Error("the config schema checker runs only as the server's child process");

const schemas = new ConfigSchemas();

// ajv and its formats load before the first check is sent, so that their loading is not charged to its time budget.
engines();

process.on("message", (data: SchemaJob) => {
  if (data.forget !== undefined) {
    schemas.forget(data.forget);
    return;
  }
  let reply: SchemaReply;
  try {
    const compiled = data.key === null ? schemas.forSchema(data.schema, data.hash) : schemas.forConfig(data.key, data.schema, data.hash);
    send({ compiled: true, id: data.id });
    const problems: string[] = [];
    for (const { value, label } of data.values) problems.push(...schemas.problems(compiled, value, label));
    reply = { id: data.id, problems };
  } catch (err) {
    reply =
      err instanceof ApiError
        ? { id: data.id, error: { message: err.message, detail: err.detail } }
        : { id: data.id, error: { message: "schema cannot be used", detail: `schema: ${(err as Error)?.message ?? String(err)}` } };
  }
  send(reply);
});

// The server went away (ended, crashed or killed): its channel closes, and this process has nothing left to do
// (Bun would end it too once nothing else holds its loop; this holds whatever else may be pending).
process.on("disconnect", () => process.exit(0));

// Ctrl-C in a terminal and `systemctl stop` signal the server's whole process group: a check in flight while the
// server drains its requests still gets its answer; the server ends this process itself (or its channel closes).
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => {});

send({ ready: true });
