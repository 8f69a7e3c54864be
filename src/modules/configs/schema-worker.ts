/**
 * The schema worker's thread: compiles config schemas and checks values
 * against them, so that neither ever runs on the server's request loop
 * (schema-checker.ts sends the work and ends this thread when a check runs
 * past its time budget). Compiled validators stay cached here, per config id
 * and schema hash.
 */
import { ApiError } from "../../lib/errors";
import { ConfigSchemas, engines } from "./json-schema";
import type { SchemaJob, SchemaReply } from "./schema-checker";

declare const self: Worker;

const schemas = new ConfigSchemas();

// ajv and its formats load before the first check is sent, so that their loading is not charged to its time budget.
engines();
self.postMessage({ ready: true } satisfies SchemaReply);

self.onmessage = ({ data }: MessageEvent<SchemaJob>) => {
  if (data.forget !== undefined) {
    schemas.forget(data.forget);
    return;
  }
  let reply: SchemaReply;
  try {
    const compiled = data.key === null ? schemas.forSchema(data.schema, data.hash) : schemas.forConfig(data.key, data.schema, data.hash);
    self.postMessage({ compiled: true, id: data.id } satisfies SchemaReply);
    const problems: string[] = [];
    for (const { value, label } of data.values) problems.push(...schemas.problems(compiled, value, label));
    reply = { id: data.id, problems };
  } catch (err) {
    reply =
      err instanceof ApiError
        ? { id: data.id, error: { message: err.message, detail: err.detail } }
        : { id: data.id, error: { message: "schema cannot be used", detail: `schema: ${(err as Error)?.message ?? String(err)}` } };
  }
  self.postMessage(reply);
};
