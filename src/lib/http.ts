import { Elysia, t, type TSchema } from "elysia";
import { compile } from "elysia/type-system/utils";
import { Type, TransformKind, type IntegerOptions, type ObjectOptions, type TInteger, type TProperties } from "@sinclair/typebox";
import { ApiError, badRequest, validation } from "./errors";

// What requests and answers carry, with no Elysia in it: read on the paths a server answers from Bun's table.
import { jsonObjectOf } from "./http-values";
export { acceptsGzip, etagMatches, filterByQuery, jsonObjectOf, requestIdFor } from "./http-values";

/**
 * A request body object: a field it does not declare is refused with
 * VALIDATION naming it (`enabled: is not a field of this body`), never
 * dropped without a word. Use it for every body, and for the objects nested
 * in one.
 */
export function BodyObject<P extends TProperties>(properties: P, options: ObjectOptions = {}) {
  return t.Object(properties, { ...options, additionalProperties: false });
}

/**
 * A query string's parameters: the ones named are checked, others are left
 * alone (links carry extra parameters such as a provider's `iss` or a cache
 * buster, and a query is not a body a client composes field by field).
 */
export function QueryObject<P extends TProperties>(properties: P, options: ObjectOptions = {}) {
  return t.Object(properties, { ...options, additionalProperties: true });
}

/**
 * Elysia's `t.Integer()`, the same schema (an integer, or a string of one where parameters arrive as text)
 * checked the same way, except that its checker is compiled when a value is first decoded rather than when
 * the schema is declared: the contracts declare dozens at import, each a TypeBox compile at every start.
 */
export function Integer(property?: IntegerOptions): TInteger {
  const schema = Type.Integer(property);
  let compiled: ReturnType<typeof compile> | undefined;
  const checker = () => (compiled ??= compile(schema));
  const integer = t
    .Transform(t.Union([t.String({ format: "integer", default: 0 }), Type.Integer(property)], property))
    .Decode((value) => {
      const number = +value;
      if (!checker().Check(number)) throw checker().Error(number);
      return number;
    })
    .Encode((value) => value);
  // Shared by every copy TypeBox makes of the schema (t.Optional spreads it): how answerSchema() knows its own.
  identityEncodings.add((integer as unknown as Record<symbol, object>)[TransformKind]!);
  return integer as unknown as TInteger;
}

/** The transforms of Integer(): their Encode gives back the value it got. */
const identityEncodings = new WeakSet<object>();
const answerSchemas = new WeakMap<TSchema, TSchema>();
/** The keys of a TypeBox schema that hold schemas (one, or an array or record of them). */
const SUBSCHEMA_KEYS = ["properties", "patternProperties", "additionalProperties", "items", "prefixItems", "anyOf", "oneOf", "allOf", "not"] as const;

/**
 * A success schema as Elysia gets it (issue 32, hot paths): Integer()'s transforms taken out. Elysia runs
 * TypeBox's value Encode, a walk of the whole answer in plain JavaScript, on every answer whose schema holds
 * a transform, instead of its compiled check: a third of the time of listing 50 killswitches. Integer()
 * encodes nothing (its Encode is the identity), so without the transform the compiled check takes exactly the
 * values Encode took (its union: an integer, or a string of one). Unchanged parts are kept, the schema itself
 * when nothing changed; other transforms, were there any, would stay.
 */
function answerSchema(schema: TSchema): TSchema {
  let answer = answerSchemas.get(schema);
  if (answer) return answer;
  answer = schema;
  type Fields = Record<string | symbol, unknown>;
  const record = schema as unknown as Fields;
  const copy = (): Fields => {
    if (answer === schema) answer = { ...record } as unknown as TSchema;
    return answer as unknown as Fields;
  };
  const codec = record[TransformKind];
  if (codec && identityEncodings.has(codec as object)) delete copy()[TransformKind];
  for (const key of SUBSCHEMA_KEYS) {
    const value = record[key];
    if (!value || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      const mapped = value.map((item) => (item && typeof item === "object" ? answerSchema(item as TSchema) : item));
      if (mapped.some((item, i) => item !== value[i])) copy()[key] = mapped;
    } else if (key === "properties" || key === "patternProperties") {
      const entries = Object.entries(value as Record<string, TSchema>);
      const mapped = entries.map(([name, sub]) => [name, answerSchema(sub)] as const);
      if (mapped.some(([, sub], i) => sub !== entries[i]![1])) copy()[key] = Object.fromEntries(mapped);
    } else {
      const mapped = answerSchema(value as TSchema);
      if (mapped !== value) copy()[key] = mapped;
    }
  }
  answerSchemas.set(schema, answer);
  return answer;
}

/** `{id}` path parameter: the spec's 1..128 characters (an id, or a name where the resource allows). */
export const IdParam = t.Object({ id: t.String({ minLength: 1, maxLength: 128, description: "Id (or name, where the resource allows)" }) });

/**
 * A numeric query parameter taken as text (Elysia's own number coercion
 * loses the parameter's name in its error): the service checks the number
 * and names the parameter. Absent stays undefined; anything else becomes a
 * number, NaN included, for that check to refuse.
 */
export function numberParam(text: string | undefined): number | undefined {
  // Digits only: `1e2`, `0x10`, ` 5 ` and `` are not numbers here (NaN, which every caller refuses by name).
  return text === undefined ? undefined : /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN;
}

/**
 * An integer with thousands separators (10000 → "10,000"), as `toLocaleString("en")` writes it, for route
 * descriptions: without Intl, whose first use costs the server's start milliseconds of ICU loading.
 */
export function groupDigits(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** The shared `q` filter of list operations. */
export const ListQuery = QueryObject({
  q: t.Optional(
    t.String({ maxLength: 100, description: "Case-insensitive substring over name, title and description (OR-matched)" }),
  ),
});

export type AuthKind = "admin" | "admin+project" | "server" | "server+browser" | "client" | "none";

const SECURITY: Record<AuthKind, Record<string, string[]>[]> = {
  admin: [{ bearer: [] }],
  "admin+project": [{ bearer: [] }],
  server: [{ sdkKey: [] }, { bearer: [] }],
  "server+browser": [{ sdkKey: [] }, { bearer: [] }],
  client: [{ sdkKey: [] }],
  none: [],
};

const AUTH_NOTES: Record<AuthKind, string> = {
  admin:
    "Auth: `Authorization: Bearer` admin key, access token or project API token. `X-Project-Id` optional (defaults to the credential's project; one the credential cannot reach is FORBIDDEN).",
  "admin+project":
    "Auth: `Authorization: Bearer` admin credential. `X-Project-Id` **required** (missing is BAD_REQUEST, one the credential cannot reach is FORBIDDEN).",
  server: "Auth: server SDK key in `X-SDK-Key` or `Authorization: Bearer` (a browser key is FORBIDDEN here: this holds every rule and salt).",
  "server+browser":
    "Auth: server SDK key, or a browser key (with the scope this path needs: `flags:evaluate`, `events:ingest` or `errors:ingest`), in `X-SDK-Key` or `Authorization: Bearer`. A browser key evaluates its own env only.",
  client: "Auth: client SDK key in `X-SDK-Key` with scope `tickets:public_create`.",
  none: "",
};

/**
 * OpenAPI description of a route, spread into its options: summary, tag, the
 * credential it takes, its success schemas and every error status it can
 * give (each the one Error schema). Error bodies are produced by the root
 * onError as ready Responses, never validated: the record Elysia gets holds
 * the success schemas only (Elysia compiles a validator for every status of
 * it on the route's first request, ~2.3 MB of heap for the error statuses of
 * all routes; issue 32, memory), while its type, which typed clients read,
 * and the OpenAPI document (`documentedResponses`) keep the error statuses.
 */
/** Every status an error body may come with (DECISIONS.md). */
type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 502 | 503;

export function describe<const R extends Record<number, TSchema> = {}>(options: {
  summary: string;
  tag: string;
  auth: AuthKind;
  errors?: number[];
  description?: string;
  response?: R;
}) {
  // 503: another process holds the store's write lock past the retry budget (`Unavailable`, Retry-After).
  const base = options.auth === "none" ? [503] : [400, 401, 403, 503];
  const codes = [...new Set([...base, ...(options.errors ?? [])])];
  return {
    detail: {
      summary: options.summary,
      tags: [options.tag],
      description: [options.description, AUTH_NOTES[options.auth]].filter(Boolean).join("\n\n"),
      security: SECURITY[options.auth],
    },
    // Typed by literal codes, not Record<number, ...>: an index signature would blur every success type
    // into the error body for typed clients (the dashboard's Eden calls).
    response: responsesOf(codes, options.response) as Omit<Record<ErrorStatus, typeof ErrorBodySchema>, keyof R> & R,
  };
}

const schemaIds = new WeakMap<object, number>();
let nextSchemaId = 0;
/** Bounded: a server builds its app once (~260 routes), a test process builds many; inline schemas are new each time. */
const responseRecords = new Map<string, Record<number, TSchema>>();
const MAX_RESPONSE_RECORDS = 2000;
/** The record Elysia validates with (success statuses) → the one the document lists (errors overlaid with those). */
const documented = new WeakMap<object, Record<number, TSchema>>();

/**
 * A status → schema record built sparse: keyed by status numbers, a plain object costs JSC 5–8 KB (a dense indexed
 * store up to the highest status, 503) against ~0.4 KB in its sparse mode: 258 routes carried ~1.5 MB of heap for
 * these records. The placeholder index puts the object in sparse mode before the statuses are added; deleting it
 * leaves the same own keys in the same (ascending) order.
 */
function sparseRecord(entries: [number, TSchema][]): Record<number, TSchema> {
  const record: Record<number, TSchema> = {};
  const placeholder = 1 << 24;
  (record as Record<number, unknown>)[placeholder] = undefined;
  for (const [code, schema] of entries) record[code] = schema;
  delete (record as Record<number, unknown>)[placeholder];
  return record;
}

/**
 * The record Elysia validates answers with: each schema as answerSchema() gives it, made when Elysia first reads it
 * (when it compiles the route's validators, on the route's first request). Made for every route at start, the
 * schemas' walk took 3.5 ms of the server's start.
 */
function answerRecord(entries: [number, TSchema][]): Record<number, TSchema> {
  const record = sparseRecord(entries);
  for (const [code, schema] of entries) {
    Object.defineProperty(record, code, {
      configurable: true,
      enumerable: true,
      get: () => {
        const answer = answerSchema(schema);
        Object.defineProperty(record, code, { value: answer, configurable: true, enumerable: true, writable: true });
        return answer;
      },
    });
  }
  return record;
}

/**
 * A route's success status → schema record for Elysia, one object shared by every route with the same statuses and
 * schemas, errors included (Elysia and the OpenAPI generator only read it): routes that differ only in their error
 * statuses get distinct objects, each mapped to its documented record (`documentedResponses`).
 */
function responsesOf(errorCodes: number[], success: Record<number, TSchema> | undefined): Record<number, TSchema> {
  const entries: [number, TSchema][] = errorCodes.map((code) => [code, ErrorBodySchema]);
  const own: [number, TSchema][] = [];
  for (const [code, schema] of Object.entries(success ?? {})) {
    own.push([Number(code), schema]);
    const at = entries.findIndex(([c]) => c === Number(code));
    if (at >= 0) entries[at] = [Number(code), schema];
    else entries.push([Number(code), schema]);
  }
  const key = entries
    .map(([code, schema]) => {
      let id = schemaIds.get(schema);
      if (id === undefined) schemaIds.set(schema, (id = nextSchemaId++));
      return `${code}:${id}`;
    })
    .join(",");
  let record = responseRecords.get(key);
  if (!record) {
    // Never undefined, even without success schemas: Elysia then still compiles the route as one with a schema (the
    // error path that tells its own validation errors apart), as it did when the error statuses were in the record.
    record = answerRecord(own);
    documented.set(record, sparseRecord(entries));
    if (responseRecords.size >= MAX_RESPONSE_RECORDS) responseRecords.clear();
    responseRecords.set(key, record);
  }
  return record;
}

/**
 * The record the OpenAPI document lists for a route's `response` record from describe(): every error status with
 * the Error schema, overlaid with the success schemas. Undefined for a record describe() did not make.
 */
export function documentedResponses(response: unknown): Record<number, TSchema> | undefined {
  return response && typeof response === "object" ? documented.get(response) : undefined;
}

/**
 * The error body schema, referenced by every route's documented error responses. Here, not in errors.ts: errors.ts is
 * imported by the config schema checker, a process of its own that must not load Elysia (issue 32, memory).
 */
export const ErrorBodySchema = t.Object(
  {
    error: t.String({ description: "Human-readable message" }),
    code: t.String({ description: "BAD_REQUEST | UNAUTHORIZED | FORBIDDEN | NOT_FOUND | ALREADY_EXISTS | IMMUTABLE_FIELD | VALIDATION | APPROVAL_REQUIRED | CONFLICT" }),
    detail: t.Optional(t.String({ description: "Failing fields or JSON paths, when known" })),
  },
  { $id: "#/components/schemas/Error", title: "Error" },
);
// Error bodies have no other field. Elysia set this on the schema (after the properties, where it is set here) when it
// compiled the first route's validators, so the document said so once any route had answered; stated here, as no
// validator of it is compiled any more (issue 32, memory), the document keeps it and no longer depends on that.
ErrorBodySchema.additionalProperties = false;

const BODY_ERROR = Symbol("body error");
type ParsedBody = Record<string, unknown> & { [BODY_ERROR]?: ApiError };

/**
 * The hooks of a macro that reads every body as an object whatever its content type: empty is `{}`, and what
 * `read` refuses is raised in `transform` (so authentication, also a transform, comes first when the macro is
 * listed after it). jsonObjectBody below reads JSON; the definitions module's documentBody reads YAML too.
 */
export function objectBodyHooks(read: (text: string, request: Request) => Record<string, unknown> | ApiError) {
  const parse = async ({ request }: { request: Request }): Promise<ParsedBody> => {
    const text = await request.text();
    if (text.trim() === "") return {};
    const body = read(text, request);
    return body instanceof ApiError ? { [BODY_ERROR]: body } : body;
  };
  return {
    // Parsers run in order until one returns a body, and ours always does: the named "json" parser is never
    // reached. It is listed because the OpenAPI plugin documents only named parsers (a lone function leaves the
    // request body without a content type). The macro's type admits functions only.
    parse: [parse, "json" as unknown as typeof parse],
    transform({ body }: { body: unknown }) {
      const error = (body as ParsedBody | undefined)?.[BODY_ERROR];
      if (error) throw error;
    },
  };
}

/**
 * The `jsonObjectBody` macro, for write routes whose fields are all optional
 * (a toggle with `{}` flips). Elysia's own parsing answers an empty body
 * with a parse error, reads JSON sent as text/plain as a string, and drops
 * bad JSON on an optional DELETE body, so that request would act as one the
 * caller never sent. With this macro every body is read as JSON whatever
 * its content type: empty is `{}`, bad JSON is BAD_REQUEST, anything but an
 * object is VALIDATION (as TypeBox normalisation makes it elsewhere). The error
 * is raised in `transform`, so list the macro after `admin: true` in the
 * route options: authentication (also a transform) then comes first, and a
 * caller without a credential learns nothing about the body.
 */
export const jsonBodyPlugin = new Elysia({ name: "json-object-body" }).macro({
  jsonObjectBody: (_enabled: true) => objectBodyHooks((text) => jsonObjectOf(text)),
});

