import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, emit, openClient, str, table, when, oneOf } from "../../cli/client-command";
import type { ArgValues, Command, Flags } from "../../cli/command";
import type { AttributeSchema, UpdateAttributeBody } from "./contract";
import type { attributeRoutes } from "./routes";

type Attribute = Static<typeof AttributeSchema>;
type Fields = Static<typeof UpdateAttributeBody>;
type AttributeType = NonNullable<Fields["type"]>;

/** The attribute routes, typed from their own schemas. */
const attributes = (client: SvcClient) => client.api<ReturnType<typeof attributeRoutes>>().api.admin.attributes;

/** Every attribute type, with what it means (a Record, so a type the server adds is a compile error here). */
const TYPES: Record<AttributeType, string> = {
  string: "text",
  number: "a number",
  boolean: "true or false",
  enum: "one of --enum's values",
  semver: "a version such as 2.4.0",
  date: "an ISO date",
};
const TYPE_NAMES = Object.keys(TYPES) as AttributeType[];

const FIELD_FLAGS = {
  enum: { type: "string", value: "LIST", help: "The values of an enum attribute, comma-separated: --enum free,pro,enterprise" },
  required: { type: "boolean", help: "Every evaluation context should carry it" },
  description: { type: "string", value: "TEXT", help: "What it is, shown in lists and the dashboard" },
  "sdk-path": { type: "string", value: "PATH", help: "Where the SDK reads it from, e.g. account.plan" },
} satisfies Flags;

function typeFlag(value: unknown): AttributeType {
  return oneOf(value, TYPE_NAMES, "--type");
}

/** `--enum a,b`: the values, trimmed; an empty flag clears them (null). */
function enumFlag(value: string): string[] | null {
  const values = value
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "");
  return values.length ? values : null;
}

/** The optional fields both create and update send, as the API names them; an empty --description or --sdk-path clears it. */
function fields(values: ArgValues): Fields {
  const body: Fields = {};
  const type = values.type === undefined ? undefined : typeFlag(values.type);
  if (type) body.type = type;
  const enumValues = str(values, "enum");
  if (enumValues !== undefined) body.enumValues = enumFlag(enumValues);
  // A type other than enum drops the values an enum had (the server refuses values on any other type).
  else if (type && type !== "enum") body.enumValues = null;
  if (values.required) body.required = true;
  const description = str(values, "description");
  if (description !== undefined) body.description = description === "" ? null : description;
  const sdkPath = str(values, "sdk-path");
  if (sdkPath !== undefined) body.sdkPath = sdkPath === "" ? null : sdkPath;
  return body;
}

const typeText = (a: Pick<Attribute, "type" | "enumValues">) => (a.enumValues?.length ? `${a.type} (${a.enumValues.join(", ")})` : a.type);
const sourceText = (a: Attribute) => (a.source === "manual" ? "declared" : "seen");

function attributeText(a: Attribute): string {
  return [
    `${a.name} (${a.id})${a.deprecated ? ": deprecated" : ""}`,
    `  type:        ${typeText(a)}`,
    `  source:      ${a.source === "manual" ? "declared (manual)" : "seen in evaluation contexts (auto)"}`,
    `  required:    ${a.required ? "yes" : "no"}`,
    `  description: ${a.description ?? "-"}`,
    `  SDK path:    ${a.sdkPath ?? "-"}`,
    `  created:     ${when(a.createdAt)}`,
    `  last seen:   ${a.lastSeenAt ? when(a.lastSeenAt) : "never"}`,
  ].join("\n");
}

export const attributesCommand: Command = {
  name: "attributes",
  summary: "Context attributes that gates target: list, get, create, update, deprecate",
  details: [
    "Attributes are declared by people (source manual: type, enum values, where the SDK finds them) or recorded by the server when evaluation contexts carry them (source auto). Gate rules naming an unknown or deprecated attribute are published with a warning.",
  ],
  examples: ["svc attributes list", "svc attributes create plan --type enum --enum free,pro,enterprise --description 'Billing plan'", "svc attributes deprecate legacy_tier"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's attributes, declared and seen, by name",
      examples: ["svc attributes list", "svc attributes list --query plan --json"],
      flags: { query: QUERY_FLAG, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(attributes(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No attributes match "${q}".` : "No attributes yet; declare one with `svc attributes create <name> --type TYPE`, or evaluate a gate with a context.";
          return table(
            ["NAME", "TYPE", "SOURCE", "LAST SEEN", "DEPRECATED"],
            all.map((a) => [a.name, typeText(a), sourceText(a), a.lastSeenAt ? when(a.lastSeenAt) : "never", a.deprecated ? "yes" : "no"]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one attribute: type, enum values, source, description, SDK path, when last seen",
      args: ["<name>"],
      examples: ["svc attributes get plan", "svc attributes get attr_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const a = await dataOf(attributes(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, a, () => attributeText(a));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Declare an attribute (one only seen so far becomes declared and keeps its id)",
      args: ["<name>"],
      examples: ["svc attributes create country --type string --description 'ISO country of the account' --sdk-path account.country", "svc attributes create plan --type enum --enum free,pro --required --json"],
      flags: {
        type: { type: "string", value: "TYPE", help: `${TYPE_NAMES.map((t) => `${t} (${TYPES[t]})`).join(", ")} (required)` },
        ...FIELD_FLAGS,
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        if (values.type === undefined) throw new UsageError(`--type is required: one of ${TYPE_NAMES.join(", ")}`);
        // The type first, as fields() puts it (it is required here).
        const body = { name: positionals[0]!, type: typeFlag(values.type), ...fields(values) };
        const a = await dataOf(attributes(openClient(values)).post(body));
        emit(values.json, a, () => `Declared attribute ${a.name} (${a.id}): ${typeText(a)}${a.required ? ", required" : ""}.`);
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change an attribute's type, enum values, description, SDK path or whether it is required",
      args: ["<name>"],
      details: ["Only the flags given change. An empty --description or --sdk-path clears it; a --type other than enum drops the enum values. Updating an attribute only seen so far declares it."],
      examples: ["svc attributes update plan --enum free,pro,enterprise", "svc attributes update country --description '' --optional --json"],
      flags: {
        type: { type: "string", value: "TYPE", help: `New type: ${TYPE_NAMES.join(", ")}` },
        ...FIELD_FLAGS,
        optional: { type: "boolean", help: "Mark it as no longer required" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        if (values.required && values.optional) throw new UsageError("--required and --optional cannot both be given");
        const body = fields(values);
        if (values.optional) body.required = false;
        if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give at least one of --type, --enum, --required, --optional, --description, --sdk-path");
        const a = await dataOf(attributes(openClient(values))({ id: seg(positionals[0]!) }).patch(body));
        emit(values.json, a, () => `Updated attribute ${a.name}:\n${attributeText(a).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    {
      name: "deprecate",
      summary: "Deprecate an attribute: gate rules naming it are still published, with a warning",
      args: ["<name>"],
      examples: ["svc attributes deprecate legacy_tier", "svc attributes deprecate legacy_tier --undo"],
      flags: { undo: { type: "boolean", help: "Lift the deprecation instead" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const deprecated = values.undo !== true;
        const a = await dataOf(attributes(openClient(values))({ id: seg(positionals[0]!) }).patch({ deprecated }));
        emit(values.json, a, () => (deprecated ? `Deprecated attribute ${a.name}: gate rules naming it now come back with a warning.` : `Attribute ${a.name} is no longer deprecated.`));
        return 0;
      },
    },
  ],
};
