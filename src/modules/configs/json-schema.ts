import type { default as Ajv, ErrorObject, Options, ValidateFunction } from "ajv";
import type { default as Ajv2020 } from "ajv/dist/2020";
import { ApiError, validation } from "../../lib/errors";
import { sha256Hex } from "../../lib/ids";
import { checkSchemaCost, checkValueCost } from "./schema-cost";

/** Largest user schema accepted, as JSON text. */
export const SCHEMA_MAX_BYTES = 64 * 1024;

const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";
const DRAFT_07 = "http://json-schema.org/draft-07/schema";

/**
 * ajv keeps every compiled schema's values in a scope shared by the instance,
 * which `removeSchema` does not clear; fresh instances after this many
 * compiles bound that growth (validators keep their own instance alive).
 */
const COMPILES_PER_GENERATION = 200;

/**
 * Deepest nesting of arrays/objects accepted in a value or a schema: far
 * beyond any real config, well inside the stack that validating, serialising
 * and answering need, and a few levels under the request body's own limit
 * (64) so that a value wrapped in a body can reach it.
 */
export const MAX_DEPTH = 60;

/**
 * Most items one array in a config value may hold. With the size limit this
 * bounds what validating one value can cost.
 */
export const MAX_ARRAY_ITEMS = 10_000;

/** How many schema errors one `detail` lists. */
const MAX_REPORTED_ERRORS = 10;

/**
 * Most weighted schema evaluations one value check may cost (see
 * checkValueCost): about a second of ajv at worst, and a bound on the errors
 * `allErrors` collects; real values against real schemas stay far below.
 */
export const VALUE_COST_BUDGET = 2_000_000;

/** Schemas compiled without a config id (a save's check), kept so that the config's first check does not compile again. */
const RECENT_BY_HASH = 16;

/**
 * `pattern` and `patternProperties` run through RE2 (linear time) instead of
 * the JS engine: a user schema like `^(a+)+$` would otherwise let a crafted
 * value stall the server. RE2 has no lookaround or backreferences; a schema
 * using them is refused when it is saved.
 */
const linearRegExp = Object.assign(
  (pattern: string, flags: string) => {
    const re = engines().RE2JS.compile(pattern);
    // ajv caches compiled patterns by their text form, as it would a RegExp's.
    return { test: (text: string) => re.matcher(text).find(), toString: () => `/${pattern}/${flags}` };
  },
  { code: "re2js" },
);

const AJV_OPTIONS: Options = {
  // Every failing path is named (up to MAX_REPORTED_ERRORS). What allErrors may collect is bounded before ajv runs:
  // the schema's cost estimate at save, VALUE_COST_BUDGET per check, and the worker's time budget (schema-checker.ts).
  allErrors: true,
  code: { regExp: linearRegExp },
  // Compiled validators live in our cache only, so two configs may carry the same `$id`.
  addUsedSchema: false,
  // Unknown keywords and formats are refused (a typo must not silently validate
  // nothing); the type, tuple and required lints would refuse valid schemas.
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
};

/** A user schema that passed its meta-schema and compiled. */
export type CompiledSchema = {
  schema: object | boolean;
  /** The JSON text stored for it, and that text's SHA-256. */
  json: string;
  hash: string;
  validate: ValidateFunction;
  /** What one value location at each depth may cost (schema-cost.ts). */
  costByDepth: Float64Array;
};

type Generation = { draft2020: Ajv2020; draft07: Ajv; compiles: number };

type Engines = {
  Ajv: typeof import("ajv").default;
  Ajv2020: typeof import("ajv/dist/2020").default;
  addFormats: typeof import("ajv-formats").default;
  RE2JS: typeof import("re2js").RE2JS;
};
let loadedEngines: Engines | undefined;

/**
 * ajv (with its formats) and re2js, loaded when the first schema is compiled rather than at every server start
 * (they and the two ajv instances cost milliseconds of it). Synchronous, as the checks that compile are.
 */
export function engines(): Engines {
  loadedEngines ??= {
    Ajv: (require("ajv") as typeof import("ajv")).default,
    Ajv2020: (require("ajv/dist/2020") as typeof import("ajv/dist/2020")).default,
    addFormats: (require("ajv-formats") as typeof import("ajv-formats")).default,
    RE2JS: (require("re2js") as typeof import("re2js")).RE2JS,
  };
  return loadedEngines;
}

/**
 * JSON text with object keys sorted: two values are equal as JSON Schema
 * means it exactly when their canonical texts are equal (numbers are parsed
 * values, so 1 and 1.0 agree).
 */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * `uniqueItems` in linear time. ajv compares object and array items pairwise
 * (quadratic: 30k objects held the event loop for seconds); a set of
 * canonical texts gives the same answer in one pass.
 */
const uniqueItemsKeyword = {
  keyword: "uniqueItems",
  type: "array" as const,
  schemaType: "boolean" as const,
  errors: true,
  validate: function uniqueItems(this: unknown, enabled: boolean, data: unknown[]): boolean {
    if (!enabled) return true;
    const seen = new Map<string, number>();
    for (let i = 0; i < data.length; i++) {
      const key = canonicalJson(data[i]);
      const first = seen.get(key);
      if (first !== undefined) {
        (uniqueItems as unknown as { errors: Partial<ErrorObject>[] }).errors = [
          { keyword: "uniqueItems", message: `must NOT have duplicate items (items ## ${first} and ${i} are identical)`, params: { i: first, j: i } },
        ];
        return false;
      }
      seen.set(key, i);
    }
    return true;
  },
};

function newGeneration(): Generation {
  const { Ajv, Ajv2020, addFormats } = engines();
  const draft2020 = new Ajv2020(AJV_OPTIONS);
  const draft07 = new Ajv(AJV_OPTIONS);
  for (const ajv of [draft2020, draft07]) {
    addFormats(ajv);
    ajv.removeKeyword("uniqueItems");
    ajv.addKeyword(uniqueItemsKeyword);
  }
  return { draft2020, draft07, compiles: 0 };
}

/** VALIDATION when `value` nests arrays/objects deeper than MAX_DEPTH. Iterative, so any depth is safe to check. */
export function checkDepth(value: unknown, field: string): void {
  checkShape(value, field, Number.POSITIVE_INFINITY);
}

/**
 * The work bound of one config value: at most MAX_DEPTH levels of nesting
 * and MAX_ARRAY_ITEMS items in any array (the byte limit is the caller's).
 */
export function checkValueBounds(value: unknown, field: string): void {
  checkShape(value, field, MAX_ARRAY_ITEMS);
}

function checkShape(value: unknown, field: string, maxItems: number): void {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > MAX_DEPTH) throw validation(`${field} is nested too deeply`, `${field}: at most ${MAX_DEPTH} levels of arrays/objects`);
    if (Array.isArray(node) && node.length > maxItems) {
      throw validation(`${field} has an array that is too long`, `${field}: an array has ${node.length} items; at most ${maxItems}`);
    }
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The request-side checks of a user schema (shape, nesting, size) and its
 * stored form. Everything that needs ajv runs in the schema checker
 * process (schema-checker.ts).
 */
export function prepareSchema(schema: unknown): { schema: object | boolean; json: string; hash: string } {
  if (typeof schema !== "boolean" && !isPlainObject(schema)) {
    throw validation("schema must be a JSON Schema", "schema: expected a JSON Schema object or a boolean");
  }
  checkDepth(schema, "schema");
  const json = JSON.stringify(schema);
  const bytes = Buffer.byteLength(json);
  if (bytes > SCHEMA_MAX_BYTES) {
    throw validation("schema is too large", `schema: ${bytes} bytes of JSON; at most ${SCHEMA_MAX_BYTES}`);
  }
  return { schema, json, hash: sha256Hex(json) };
}

/** The root `default` of a schema, if it has one. */
export function rootDefault(schema: unknown): { value: unknown } | null {
  return isPlainObject(schema) && Object.hasOwn(schema, "default") ? { value: schema.default } : null;
}

function describeErrors(label: string, errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => {
    const extra = e.keyword === "additionalProperties" ? ` (${String(e.params.additionalProperty)})` : "";
    return `${label} ${e.instancePath || "/"}: ${e.message ?? "is invalid"}${extra}`;
  });
}

/**
 * JSON Schemas of configs, as the checker process (schema-check-process.ts) keeps
 * them: checks and compiles each schema once, and keeps the compiled
 * validator per config id + schema hash, so that no check compiles again
 * (compiling per request leaks and is slow, NOTES.md).
 */
export class ConfigSchemas {
  // True private fields: Elysia serialises the app context (seed checksum) and ajv instances are cyclic.
  /** Made by the first compile (see engines()). */
  #generation: Generation | undefined;
  readonly #byConfig = new Map<string, CompiledSchema>();
  readonly #recent = new Map<string, CompiledSchema>();

  /**
   * Checks a user schema (shape, size, dialect by `$schema`, meta-schema,
   * compilation) and compiles it. Every problem is VALIDATION naming it.
   */
  compile(input: unknown): CompiledSchema {
    const { schema, json, hash } = prepareSchema(input);
    const ajv = this.instanceFor(schema);
    // Before ajv: the estimate is cheap and bounded, while ajv's meta-schema check and compile of a hostile schema are neither.
    const costByDepth = checkSchemaCost(schema, MAX_DEPTH);
    let validate: ValidateFunction;
    try {
      if (!ajv.validateSchema(schema)) {
        const problems = (ajv.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => `schema${e.instancePath}: ${e.message ?? "is invalid"}`);
        throw validation("schema is not a valid JSON Schema", problems.join("; "));
      }
      validate = ajv.compile(schema);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw validation("schema cannot be compiled", `schema: ${(err as Error).message}`);
    } finally {
      // The validator is ours to keep; ajv's own cache entry would only pin the schema.
      if (typeof schema === "object") ajv.removeSchema(schema);
      this.#current().compiles++;
    }
    if (this.#current().compiles >= COMPILES_PER_GENERATION) this.#generation = newGeneration();
    return { schema, json, hash, validate, costByDepth };
  }

  /**
   * The validator of a stored config. Compiles only when this process has not
   * seen that schema yet (after a restart, or when another process changed it).
   */
  forConfig(configId: string, json: string, hash: string): CompiledSchema {
    const cached = this.#byConfig.get(configId);
    if (cached && cached.hash === hash) return cached;
    const compiled = this.forSchema(json, hash);
    this.#byConfig.set(configId, compiled);
    return compiled;
  }

  /** The validator of a schema not (yet) stored for a config: compiled once per hash among the last few. */
  forSchema(json: string, hash: string): CompiledSchema {
    const recent = this.#recent.get(hash);
    if (recent) return recent;
    const compiled = this.compile(JSON.parse(json));
    this.#recent.set(hash, compiled);
    if (this.#recent.size > RECENT_BY_HASH) this.#recent.delete(this.#recent.keys().next().value!);
    return compiled;
  }

  forget(configId: string): void {
    this.#byConfig.delete(configId);
  }

  /** `label /json/path: message` for each way `value` fails, or [] when it fits. */
  problems(compiled: CompiledSchema, value: unknown, label: string): string[] {
    checkValueCost(value, compiled.costByDepth, VALUE_COST_BUDGET, label);
    try {
      if (compiled.validate(value)) return [];
    } catch {
      // Values are depth-limited, so only a schema that `$ref`s itself without consuming the value overflows.
      return [`${label} /: cannot be validated: the schema recurses without end`];
    }
    return describeErrors(label, compiled.validate.errors);
  }

  #current(): Generation {
    this.#generation ??= newGeneration();
    return this.#generation;
  }

  private instanceFor(schema: object | boolean): Ajv | Ajv2020 {
    const declared = isPlainObject(schema) ? schema.$schema : undefined;
    if (declared === undefined) return this.#current().draft2020;
    const uri = typeof declared === "string" ? declared.replace(/#$/, "") : null;
    if (uri === DRAFT_2020_12) return this.#current().draft2020;
    if (uri === DRAFT_07) return this.#current().draft07;
    throw validation(
      "Unsupported JSON Schema dialect",
      `schema.$schema: supported are "${DRAFT_2020_12}" (the default) and "${DRAFT_07}#"`,
    );
  }
}
