import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import type { SegmentRange } from "./service";
import type { CreateUniverseBody, UniverseSchema, UpdateUniverseBody } from "./contract";
import type { universeRoutes } from "./routes";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, emit, openClient, str, table, when, deleteCommand } from "../../cli/client-command";
import type { ArgValues, Command } from "../../cli/command";

type Universe = Static<typeof UniverseSchema>;
type UnitType = Universe["unit_type"];

/** The universe routes, typed from their own schemas. */
const universes = (client: SvcClient, options: { requireProject?: boolean } = {}) => client.api<ReturnType<typeof universeRoutes>>(options).api.admin.universes;
const SEGMENTS = 10_000;

/** Every unit type, with what it identifies (a Record, so a type the server adds is a compile error here). */
const UNIT_TYPES: Record<UnitType, string> = { user_id: "a person", account_id: "an account, for account-level experiments" };
const UNIT_TYPE_NAMES = Object.keys(UNIT_TYPES) as UnitType[];

const HOLDOUT_HELP = "START-END in segments 0 to 10000, end excluded: 0-500 holds out segments 0 to 499, 5 % of units (needs plan pro or above)";

/**
 * `0-500`, `0..500`, `[0, 500)`: the `[start, end)` in segments the API takes (holdouts, experiment allocations),
 * or null when the text is none of those. Bounds are the server's to check, so its message says why.
 */
export function parseSegmentRange(text: string): SegmentRange | null {
  const m = /^\s*\[?\s*(\d{1,6})\s*(?:-|\.\.|,)\s*(\d{1,6})\s*[)\]]?\s*$/.exec(text);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

export function holdoutFlag(text: string): SegmentRange {
  const range = parseSegmentRange(text);
  if (!range) throw new UsageError(`--holdout must be START-END in segments, e.g. --holdout 0-500 (got "${text}"); --clear-holdout removes it`);
  return range;
}

function unitTypeFlag(value: unknown): UnitType {
  if (!UNIT_TYPE_NAMES.includes(value as UnitType)) throw new UsageError(`--unit-type must be one of ${UNIT_TYPE_NAMES.join(", ")} (got "${value}")`);
  return value as UnitType;
}

const percent = (r: readonly number[]) => `${Number((((r[1] - r[0]) / SEGMENTS) * 100).toFixed(2))} %`;

/** `segments 0-499 (5 % of units)`, or `none`. */
export function holdoutText(range: readonly number[] | null): string {
  return range ? `segments ${range[0]}-${range[1] - 1} (${percent(range)} of units)` : "none";
}

function universeText(u: Universe): string {
  return [
    `${u.name} (${u.id})`,
    `  unit type: ${u.unit_type} (${UNIT_TYPES[u.unit_type] ?? u.unit_type})`,
    `  holdout:   ${holdoutText(u.holdout_range)}`,
    `  salt:      ${u.salt}`,
    `  created:   ${when(u.createdAt)}`,
    `  updated:   ${when(u.updatedAt)}`,
  ].join("\n");
}

function holdoutBody(values: ArgValues): { holdout_range?: SegmentRange | null } {
  const holdout = str(values, "holdout");
  if (holdout !== undefined && values["clear-holdout"]) throw new UsageError("--holdout and --clear-holdout cannot both be given");
  if (holdout !== undefined) return { holdout_range: holdoutFlag(holdout) };
  if (values["clear-holdout"]) return { holdout_range: null };
  return {};
}

export const universesCommand: Command = {
  name: "universes",
  summary: "Universes experiments share (unit type, holdout): list, get, create, update, delete",
  details: [
    "A universe splits its units (user_id, or account_id) into 10,000 segments by a salted hash of the unit id; experiments take disjoint ranges of segments and the holdout range goes to none of them.",
  ],
  examples: ["svc universes create web-users", "svc universes create accounts --unit-type account_id --holdout 0-500", "svc universes update web-users --holdout 9500-10000"],
  subcommands: [
    {
      name: "list",
      summary: "List the project's universes with unit type and holdout",
      examples: ["svc universes list", "svc universes list --query web --json"],
      flags: { query: { ...QUERY_FLAG, help: "Only universes whose name contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(universes(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No universes match "${q}".` : "No universes yet; create one with `svc universes create <name>`.";
          return table(
            ["NAME", "UNIT TYPE", "HOLDOUT", "UPDATED"],
            all.map((u) => [u.name, u.unit_type, holdoutText(u.holdout_range), when(u.updatedAt)]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one universe: unit type, holdout, salt",
      args: ["<name>"],
      examples: ["svc universes get web-users", "svc universes get uni_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const u = await dataOf(universes(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, u, () => universeText(u));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a universe (--json prints its full record)",
      args: ["<name>"],
      details: [`--unit-type: ${UNIT_TYPE_NAMES.map((t) => `${t} (${UNIT_TYPES[t]})`).join(" or ")}; it cannot change later.`, `--holdout: ${HOLDOUT_HELP}.`],
      examples: ["svc universes create web-users", "svc universes create accounts --unit-type account_id --holdout 0-500 --json"],
      flags: {
        "unit-type": { type: "string", value: "TYPE", help: `${UNIT_TYPE_NAMES.join(" or ")} (default user_id); fixed once created` },
        holdout: { type: "string", value: "RANGE", help: HOLDOUT_HELP },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const body: Static<typeof CreateUniverseBody> = { name: positionals[0]! };
        if (values["unit-type"] !== undefined) body.unit_type = unitTypeFlag(values["unit-type"]);
        Object.assign(body, holdoutBody(values));
        const client = openClient(values);
        const created = await dataOf(universes(client, { requireProject: true }).post(body));
        const u = await dataOf(universes(client)({ id: seg(created.id) }).get());
        emit(values.json, u, () => `Created universe ${u.name} (${u.id}): unit type ${u.unit_type}, holdout ${holdoutText(u.holdout_range)}.`);
        return 0;
      },
    },
    {
      name: "update",
      summary: "Rename a universe or move its holdout",
      args: ["<name>"],
      details: [
        `Only the flags given change. --holdout: ${HOLDOUT_HELP}; it may not cover segments of an experiment running in the universe. The unit type and the salt never change (a new one would move every unit to another segment): create another universe instead.`,
      ],
      examples: ["svc universes update web-users --holdout 9500-10000", "svc universes update web-users --clear-holdout", "svc universes update web-users --rename web-visitors --json"],
      flags: {
        holdout: { type: "string", value: "RANGE", help: HOLDOUT_HELP },
        "clear-holdout": { type: "boolean", help: "Remove the holdout: its units may then be given to experiments" },
        rename: { type: "string", value: "NAME", help: "A new name (experiments keep following it: they hold its id)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const body: Static<typeof UpdateUniverseBody> = { ...holdoutBody(values) };
        const rename = str(values, "rename");
        if (rename !== undefined) body.name = rename;
        if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give --holdout START-END, --clear-holdout or --rename NAME");
        const u = await dataOf(universes(openClient(values))({ id: seg(positionals[0]!) }).patch(body));
        emit(values.json, u, () => `Updated universe ${u.name}:\n${universeText(u).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    deleteCommand({
      summary: "Delete a universe (refused while an experiment runs in it)",
      examples: ["svc universes delete old-universe", "svc universes delete old-universe --yes --json"],
      question: (name) => `Delete universe ${name}?`,
      remove: async (client, name) => await dataOf(universes(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Deleted universe ${name}.`],
    }),
  ],
};
