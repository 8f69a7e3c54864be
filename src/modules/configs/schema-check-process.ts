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
import { serverChannel } from "../../lib/process-roles";
import { ConfigSchemas, engines } from "./json-schema";
import type { SchemaJob, SchemaReply } from "./schema-checker";

// First, before ajv loads: a check in flight while the server drains its requests on Ctrl-C still gets its answer.
const send = serverChannel<SchemaReply>("the config schema checker");

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

send({ ready: true });
