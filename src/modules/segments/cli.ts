import { readFileSync } from "node:fs";
import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, deleteCommand, emit, jsonFlag, openClient, str, table, when } from "../../cli/client-command";
import type { ArgValues, Command, Flags } from "../../cli/command";
import { conditionText } from "../gates/cli";
import type { CreateSegmentBody, SegmentSchema, UpdateSegmentBody } from "./contract";
import { IDS_MAX, chunkIds, firstBudget, idPatches, parseIdsText } from "./ids-file";
import type { segmentRoutes } from "./routes";

type Segment = Static<typeof SegmentSchema>;
type Condition = Segment["conditions"][number];
type CreateBody = Static<typeof CreateSegmentBody>;
type UpdateBody = Static<typeof UpdateSegmentBody>;

/** The segment routes, typed from their own schemas. */
const segments = (client: SvcClient) => client.api<ReturnType<typeof segmentRoutes>>().api.admin.segments;

const NUMBER = new Intl.NumberFormat("en");
const idsText = (n: number) => `${NUMBER.format(n)} id${n === 1 ? "" : "s"}`;
const conditionsText = (conditions: Condition[]) => (conditions.length ? conditions.map(conditionText).join(" and ") : "none");

function idsFile(values: ArgValues, flag: string, attribute: string): string[] | undefined {
  const path = str(values, flag);
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`--${flag} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const ids = parseIdsText(text, attribute);
  if (ids.length > IDS_MAX) throw new UsageError(`--${flag} ${path}: ${NUMBER.format(ids.length)} ids; a segment holds at most ${NUMBER.format(IDS_MAX)}`);
  return ids;
}

/** `--conditions`: a JSON list of conditions, or an object with a `conditions` list (what `svc segments get NAME --json` prints). The server checks them. */
function conditionsFlag(text: unknown): Condition[] {
  const parsed = jsonFlag(text, "conditions");
  const list = Array.isArray(parsed) ? parsed : typeof parsed === "object" && parsed !== null && Array.isArray((parsed as { conditions?: unknown }).conditions) ? (parsed as { conditions: unknown[] }).conditions : undefined;
  if (!list) throw new UsageError(`--conditions must be a JSON list of conditions such as '[{"attr":"email","op":"ends_with","value":"@acme.com"}]' (got ${parsed === null ? "null" : typeof parsed})`);
  return list as Condition[];
}

/** The fields create and update both send, as the API names them. */
function fields(values: ArgValues): Omit<UpdateBody, "ids" | "addIds" | "removeIds" | "name"> {
  const body: Omit<UpdateBody, "ids" | "addIds" | "removeIds" | "name"> = {};
  const description = str(values, "description");
  if (description !== undefined) body.description = description;
  const attribute = str(values, "attribute");
  if (attribute !== undefined) body.attribute = attribute;
  if (values.conditions !== undefined) body.conditions = conditionsFlag(values.conditions);
  return body;
}

function segmentText(s: Omit<Segment, "ids">): string {
  return [
    `${s.name} (${s.id})${s.description ? `: ${s.description}` : ""}`,
    `  ids:        ${idsText(s.idCount)} on ${s.attribute}`,
    `  conditions: ${conditionsText(s.conditions)}`,
    `  updated:    ${when(s.updatedAt)}`,
  ].join("\n");
}

/** The answer without its ids (up to 100,000 of them): what people are shown. */
const summary = ({ ids: _ids, ...rest }: Segment) => rest;

const FIELD_FLAGS = {
  description: { type: "string", value: "TEXT", help: "What the segment is for, shown in lists" },
  attribute: { type: "string", value: "ATTR", help: "The context attribute the ids are matched on (default user_id)" },
  conditions: {
    type: "string",
    value: "JSON",
    help: 'Gate conditions that all hold for a unit in the segment, as a JSON list or @FILE: [{"attr":"email","op":"ends_with","value":"@acme.com"}] ([] clears them)',
  },
  "ids-file": {
    type: "string",
    value: "FILE",
    help: "The id list: a CSV file (its first column) or one id per line; a first line equal to the attribute (a header such as user_id) is skipped. Up to 100,000 ids, sent in parts",
  },
} satisfies Flags;

const parts = (n: number) => (n > 1 ? ` (sent in ${n} requests)` : "");

export const segmentsCommand: Command = {
  name: "segments",
  summary: "Segments gates reuse (in_segment / not_in_segment): list, get, create, update, delete",
  details: [
    "A segment is a named set of units: a list of up to 100,000 ids on one attribute (default user_id), or gate conditions, or both. Gate rules name it with {\"attr\":\"user_id\",\"op\":\"in_segment\",\"value\":\"<name>\"}; a change republishes every env whose rules name it.",
    "Id files are CSV (the first column) or one id per line; a list larger than one request body is sent in parts.",
  ],
  examples: ["svc segments create beta-testers --ids-file beta.csv --description 'Beta programme'", "svc segments update beta-testers --add-ids-file wave2.csv", "svc segments list"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's segments with their id count, attribute and conditions",
      examples: ["svc segments list", "svc segments list --query beta --json"],
      flags: { query: QUERY_FLAG, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(segments(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No segments match "${q}".` : "No segments yet; create one with `svc segments create <name> --ids-file FILE`.";
          return table(
            ["NAME", "IDS", "ATTRIBUTE", "CONDITIONS", "DESCRIPTION"],
            all.map((s) => [s.name, NUMBER.format(s.idCount), s.attribute, s.conditions.length ? conditionsText(s.conditions) : "", s.description]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one segment: its id count (--json lists the ids), attribute and conditions",
      args: ["<name>"],
      examples: ["svc segments get beta-testers", "svc segments get beta-testers --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const s = await dataOf(segments(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, s, () => segmentText(s));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a segment from an id file and/or conditions",
      args: ["<name>"],
      examples: [
        "svc segments create beta-testers --ids-file beta.csv --description 'Beta programme'",
        `svc segments create acme-staff --conditions '[{"attr":"email","op":"ends_with","value":"@acme.com"}]'`,
        "svc segments create big-accounts --attribute account_id --ids-file accounts.txt --json",
      ],
      flags: { ...FIELD_FLAGS, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const body: CreateBody = { name, ...fields(values) };
        const ids = idsFile(values, "ids-file", body.attribute ?? "user_id") ?? [];
        const chunks = chunkIds(ids, firstBudget(body));
        if (chunks.length > 0) body.ids = chunks[0]!;
        const client = openClient(values);
        const created = await dataOf(segments(client).post(body));
        let idCount = body.ids?.length ?? 0;
        for (const addIds of chunks.slice(1)) idCount = (await dataOf(segments(client)({ id: seg(created.id) }).patch({ addIds }))).idCount;
        emit(values.json, { ...created, idCount }, () =>
          [
            `Created segment ${created.name} (${created.id}): ${idsText(idCount)}${parts(chunks.length)}${body.conditions?.length ? `, conditions ${conditionsText(body.conditions)}` : ""}.`,
            `Name it in a gate rule: {"attr":"${body.attribute ?? "user_id"}","op":"in_segment","value":"${created.name}"}`,
          ].join("\n"),
        );
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change a segment: replace its ids, add or remove some, or change its other fields",
      args: ["<name>"],
      details: [
        "Only the flags given change. --ids-file replaces the whole list; --add-ids-file and --remove-ids-file change it (removals first). A list larger than one request body is sent in parts: --ids-file then sends only the difference, removals first, so no unit that stays in the list ever leaves it on the way.",
      ],
      examples: ["svc segments update beta-testers --add-ids-file wave2.csv", "svc segments update beta-testers --ids-file all.csv --json", "svc segments update beta-testers --description 'Beta, second wave'"],
      flags: {
        ...FIELD_FLAGS,
        "add-ids-file": { type: "string", value: "FILE", help: "Ids to add (CSV first column, or one per line); ids already listed stay" },
        "remove-ids-file": { type: "string", value: "FILE", help: "Ids to take out (CSV first column, or one per line)" },
        rename: { type: "string", value: "NAME", help: "A new name (refused while gate rules name the segment)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const ref = positionals[0]!;
        const partial = values["add-ids-file"] !== undefined || values["remove-ids-file"] !== undefined;
        if (values["ids-file"] !== undefined && partial) throw new UsageError("--ids-file replaces the whole list: give it, or --add-ids-file / --remove-ids-file, not both");
        const body: UpdateBody = fields(values);
        const rename = str(values, "rename");
        if (rename !== undefined) body.name = rename;
        const withIds = values["ids-file"] !== undefined || partial;
        if (Object.keys(body).length === 0 && !withIds) throw new UsageError("nothing to change: give --ids-file, --add-ids-file, --remove-ids-file, --description, --attribute, --conditions or --rename");
        const client = openClient(values);
        const api = segments(client);
        // A header line is skipped when it names the attribute: the new one, else the segment's.
        const current = withIds && (body.attribute === undefined || values["ids-file"] !== undefined) ? await dataOf(api({ id: seg(ref) }).get()) : undefined;
        const attribute = body.attribute ?? current?.attribute ?? "user_id";
        const replace = idsFile(values, "ids-file", attribute);
        const remove = idsFile(values, "remove-ids-file", attribute);
        const add = idsFile(values, "add-ids-file", attribute);
        const requests = idPatches(body, { replace, current: current?.ids, remove, add });
        let s: Segment | undefined;
        for (const patch of requests) s = await dataOf(api({ id: seg(s?.id ?? ref) }).patch(patch));
        emit(values.json, s, () => `Updated segment ${s!.name}${parts(requests.length)}:\n${segmentText(summary(s!)).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a segment (refused while gate rules name it; the answer names them)",
      examples: ["svc segments delete old-beta", "svc segments delete old-beta --yes --json"],
      question: (name) => `Delete segment ${name}?`,
      remove: async (client, name) => await dataOf(segments(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted segment ${name}.`],
    }),
  ],
};
