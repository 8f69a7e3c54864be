import { UsageError } from "../../lib/config";
import type { Static } from "elysia";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, QUERY_FLAG, emit, intFlag, list, openClient, str, table, when, deleteCommand } from "../../cli/client-command";
import type { ArgValues, Command, Flag, Flags } from "../../cli/command";
import type { CatalogEventSchema, CreateEventBody, UpdateEventBody } from "./contract";
import type { eventCatalogRoutes, eventCountRoutes } from "./routes";

type CatalogEvent = Static<typeof CatalogEventSchema>;
type EventProperty = CatalogEvent["properties"][number];
type Fields = Static<typeof UpdateEventBody>;
type PropertyType = NonNullable<Fields["properties"]>[number]["type"];

/** Every property type (a Record, so a type the server adds is a compile error here). */
const TYPES: Record<PropertyType, true> = { string: true, number: true, boolean: true };
const PROPERTY_TYPES = Object.keys(TYPES) as PropertyType[];
type PropertyInput = { name: string; type: PropertyType; required: boolean; description?: string };

/** The event catalog routes, typed from their own schemas. */
const events = (client: SvcClient) => client.api<ReturnType<typeof eventCatalogRoutes>>().api.admin.events;
const eventCounts = (client: SvcClient) => client.api<ReturnType<typeof eventCountRoutes>>().api.admin["event-counts"];

/** Text an SDK client sent, shown on one line with control characters escaped (JSON's escapes): it never drives the terminal. */
const sent = (text: string) => JSON.stringify(text).slice(1, -1);

const PROPERTY_FLAG: Flag = {
  type: "string",
  value: "NAME:TYPE[:required]",
  multiple: true,
  help: `A property the event carries: TYPE is ${PROPERTY_TYPES.join(", ")}; several at once as a comma list: --property amount:number:required,plan:string`,
};

const FIELD_FLAGS = {
  folder: { type: "string", value: "TEXT", help: "Folder it is filed under in lists and the dashboard (an empty one clears it)" },
  description: { type: "string", value: "TEXT", help: "What the event means (an empty one clears it)" },
} satisfies Flags;

/**
 * One `--property` entry: `amount:number`, `amount:number:required`,
 * `amount:number:optional`. Read from the right, since a property name may
 * itself hold `:`.
 */
function propertyOf(entry: string): PropertyInput {
  const parts = entry.split(":");
  let required = false;
  const last = parts.at(-1)!.toLowerCase();
  if (parts.length >= 3 && (last === "required" || last === "optional")) {
    required = last === "required";
    parts.pop();
  }
  const type = parts.length >= 2 ? parts.pop()!.toLowerCase() : undefined;
  const name = parts.join(":");
  if (type === undefined || name === "") throw new UsageError(`--property must be NAME:TYPE[:required], e.g. --property amount:number:required (got "${entry}")`);
  if (!PROPERTY_TYPES.includes(type as PropertyType)) {
    throw new UsageError(`--property ${entry}: the type must be one of ${PROPERTY_TYPES.join(", ")} (got "${type}"); write it as NAME:TYPE[:required]`);
  }
  return { name, type: type as PropertyType, required };
}

/** Every `--property` (repeated, or comma lists), in order; one name twice is a mistake. */
function propertiesFlag(values: ArgValues, flag = "property"): PropertyInput[] {
  const entries = list(values, flag)
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
  const out = entries.map(propertyOf);
  const names = out.map((p) => p.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new UsageError(`--${flag} names ${twice} twice; give each property once`);
  return out;
}

function textFields(values: ArgValues): Fields {
  const body: Fields = {};
  const folder = str(values, "folder");
  if (folder !== undefined) body.folder = folder;
  const description = str(values, "description");
  if (description !== undefined) body.description = description;
  return body;
}

const propertyText = (p: Pick<EventProperty, "name" | "type" | "required">) => `${p.name}: ${p.type}${p.required ? ", required" : ""}`;
const propertyNames = (e: CatalogEvent) => e.properties.map((p) => p.name).join(", ");
const approveHint = (name: string) => `svc events approve ${/^[\w.:-]+$/.test(name) ? name : `'${name}'`}`;

function eventText(e: CatalogEvent): string {
  const lines = [
    `${e.name} (${e.id})${e.pending ? ": PENDING (seen in ingest, not approved yet)" : ""}`,
    `  folder:      ${e.folder || "-"}`,
    `  description: ${e.description || "-"}`,
    `  created:     ${when(e.createdAt)}`,
    `  updated:     ${when(e.updatedAt)}`,
    `  last seen:   ${e.lastSeenAt ? when(e.lastSeenAt) : "never"}`,
    `  properties:  ${e.properties.length ? "" : "none"}`.trimEnd(),
    ...e.properties.map((p) => `    ${propertyText(p)}${p.description ? `: ${p.description}` : ""}`),
  ];
  if (e.pending) lines.push(`Approve it with \`${approveHint(e.name)}\`.`);
  return lines.join("\n");
}

export const eventsCommand: Command = {
  name: "events",
  summary: "The event catalog (the analytics events metrics count): list, get, create, approve, update, delete; counts and recent (what arrived)",
  details: [
    "SDKs send events with POST /api/sdk/v1/events. A name nobody registered becomes a pending row of the catalog, with the properties it carried; `svc events approve <name>` accepts it. Metrics may name any catalogued event, pending or not.",
  ],
  examples: ["svc events list", "svc events create checkout.completed --folder commerce --property amount:number:required,plan:string", "svc events approve signup"],
  subcommands: [
    {
      name: "list",
      summary: "List the catalog by name; pending rows (seen in ingest, not approved) are marked",
      examples: ["svc events list", "svc events list --query commerce --json"],
      flags: { query: { ...QUERY_FLAG, help: "Only events whose name, folder or description contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        const all = await dataOf(events(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No events match "${q}".` : "No events yet; register one with `svc events create <name>`, or send one from an SDK.";
          const lines = [
            table(
              ["NAME", "FOLDER", "PENDING", "LAST SEEN", "PROPERTIES", "DESCRIPTION"],
              all.map((e) => [e.name, e.folder, e.pending ? "yes" : "no", e.lastSeenAt ? when(e.lastSeenAt) : "never", propertyNames(e), e.description]),
            ),
          ];
          const pending = all.filter((e) => e.pending);
          if (pending.length) {
            const one = pending.length === 1;
            lines.push("", `${pending.length} pending event${one ? " was" : "s were"} seen in ingest and not approved yet: approve ${one ? "it" : "each"} with \`${approveHint(one ? pending[0]!.name : "<name>")}\`.`);
          }
          return lines.join("\n");
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one event: folder, description, properties, whether it is pending, when last seen",
      args: ["<name>"],
      examples: ["svc events get checkout.completed", "svc events get evt_… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const e = await dataOf(events(openClient(values))({ id: seg(positionals[0]!) }).get());
        emit(values.json, e, () => eventText(e));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Register an event in the catalog (a pending one of that name is approved with these fields)",
      args: ["<name>"],
      details: ["Names: 1 to 128 letters, digits, _ . : or -. Property names: the same, and $."],
      examples: ["svc events create checkout.completed --folder commerce --description 'An order was paid' --property amount:number:required --property plan:string", "svc events create app.open --json"],
      flags: { ...FIELD_FLAGS, property: PROPERTY_FLAG, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const body: Static<typeof CreateEventBody> = { name, ...textFields(values) };
        const properties = propertiesFlag(values);
        if (properties.length) body.properties = properties;
        const created = await dataOf(events(openClient(values)).post(body));
        emit(values.json, created, () => {
          const shown = properties.length ? ` with ${properties.map(propertyText).join("; ")}` : "";
          return `Registered event ${created.name} (${created.id})${shown}.`;
        });
        return 0;
      },
    },
    {
      name: "approve",
      summary: "Approve a pending event (one SDKs sent that nobody registered): it joins the catalog as is",
      args: ["<name>"],
      details: ["Its properties are kept as ingest recorded them; change them afterwards with `svc events update`."],
      examples: ["svc events approve signup", "svc events approve signup --folder growth --json"],
      flags: { ...FIELD_FLAGS, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const client = openClient(values);
        const current = await dataOf(events(client)({ id: seg(positionals[0]!) }).get());
        if (!current.pending) {
          emit(values.json, current, () => `Event ${current.name} is already approved; nothing changed.`);
          return 0;
        }
        await dataOf(events(client).post({ name: current.name, ...textFields(values) }));
        const approved = await dataOf(events(client)({ id: seg(current.id) }).get());
        emit(values.json, approved, () => `Approved event ${approved.name} (${approved.id})${approved.properties.length ? ` with ${approved.properties.map(propertyText).join("; ")}` : ""}.`);
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change an event's folder, description or properties",
      args: ["<name>"],
      details: [
        "Only the flags given change. --property adds a property or changes the one of that name (its description is kept); --remove-property drops one. A metric naming a removed property stops compiling until it is saved again.",
      ],
      examples: ["svc events update checkout.completed --description 'Paid, after 3-D Secure'", "svc events update checkout.completed --property coupon:boolean --remove-property legacy_id --json"],
      flags: {
        ...FIELD_FLAGS,
        property: { ...PROPERTY_FLAG, help: `Add a property, or change the one of that name: ${PROPERTY_FLAG.help.slice(PROPERTY_FLAG.help.indexOf("TYPE is"))}` },
        "remove-property": { type: "string", value: "NAME", multiple: true, help: "Drop a property from the event (a comma list removes several)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const body = textFields(values);
        const changed = propertiesFlag(values);
        const removed = list(values, "remove-property")
          .flatMap((v) => v.split(","))
          .map((v) => v.trim())
          .filter((v) => v !== "");
        const both = changed.find((p) => removed.includes(p.name));
        if (both) throw new UsageError(`--property and --remove-property both name ${both.name}; give it to one of them`);
        if (Object.keys(body).length === 0 && changed.length === 0 && removed.length === 0) {
          throw new UsageError("nothing to change: give at least one of --folder, --description, --property, --remove-property");
        }
        const client = openClient(values);
        if (changed.length || removed.length) {
          const current = await dataOf(events(client)({ id: seg(positionals[0]!) }).get());
          const missing = removed.filter((n) => !current.properties.some((p) => p.name === n));
          if (missing.length) {
            throw new UsageError(`--remove-property: ${current.name} has no property ${missing.join(", ")} (it has: ${current.properties.map((p) => p.name).join(", ") || "none"})`);
          }
          // The catalog answers a property's type as text; it is one the catalog accepts, sent back as it came.
          const next = current.properties.filter((p) => !removed.includes(p.name)) as PropertyInput[];
          for (const p of changed) {
            const at = next.findIndex((q) => q.name === p.name);
            if (at === -1) next.push(p);
            else next[at] = { ...p, description: next[at]!.description };
          }
          body.properties = next;
        }
        const e = await dataOf(events(client)({ id: seg(positionals[0]!) }).patch(body));
        emit(values.json, e, () => `Updated event ${e.name}:\n${eventText(e).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    {
      name: "counts",
      summary: "How many events of each name arrived in the last 24 hours and 7 days",
      details: ["Counted in whole UTC hours (the current one included) from the hourly roll-ups. Names are what SDK clients sent."],
      examples: ["svc events counts", "svc events counts --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values }) {
        const r = await dataOf(eventCounts(openClient(values)).get());
        emit(values.json, r, () =>
          r.counts.length === 0
            ? "No events in the last 7 days."
            : [table(["NAME", "LAST 24 H", "LAST 7 D"], r.counts.map((c) => [sent(c.name), c.last24h, c.last7d])), "", `Since ${when(r.since.last24h)} and ${when(r.since.last7d)} UTC.`].join("\n"),
        );
        return 0;
      },
    },
    {
      name: "recent",
      summary: "The newest raw events of one name with their unit, value and properties (newest first, paged)",
      args: ["<name>"],
      details: [
        "At most --limit events (1 to 100, default 25); the answer's `next` (printed at the end) is the --before of the next, older page. Unit ids and properties are what SDK clients sent: shown with control characters escaped.",
      ],
      examples: ["svc events recent checkout.completed", "svc events recent checkout.completed --limit 100 --json", "svc events recent checkout.completed --before MTc5NTg3NDUzMTExNDoxMg"],
      flags: {
        limit: { type: "string", value: "N", help: "At most N events, 1 to 100 (default 25)" },
        before: { type: "string", value: "CURSOR", help: "The `next` of the previous page: older events" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const name = positionals[0]!;
        const limit = intFlag(values.limit, "limit", 1, 100);
        const r = await dataOf(events(openClient(values))({ id: seg(name) }).recent.get({ query: { limit: limit?.toString(), before: str(values, "before") } }));
        emit(values.json, r, () => {
          if (r.events.length === 0) return values.before ? `No older events of ${r.name}.` : `No events of ${r.name} stored (none sent, or all past the project's retention).`;
          const lines = [
            table(
              ["WHEN", "UNIT", "VALUE", "PROPERTIES"],
              r.events.map((e) => [e.at.replace("T", " ").replace("Z", ""), e.unitId === null ? null : sent(e.unitId), e.value, e.properties ? JSON.stringify(e.properties) : null]),
              { full: ["WHEN", "PROPERTIES"] },
            ),
          ];
          if (r.next) lines.push("", `Older events: svc events recent ${/^[\w.:-]+$/.test(r.name) ? r.name : `'${r.name}'`} --before ${r.next}`);
          return lines.join("\n");
        });
        return 0;
      },
    },
    deleteCommand({
      summary: "Remove an event from the catalog (events already stored stay; ingest of the name makes it pending again)",
      examples: ["svc events delete temp.event", "svc events delete temp.event --yes --json"],
      question: (name) => `Remove event ${name} from the catalog? Stored events stay; metrics naming it stop working until they are saved again.`,
      remove: async (client, name) => await dataOf(events(client)({ id: seg(name) }).delete()),
      done: (name) => [{ name, deleted: true }, `Removed event ${name} from the catalog.`],
    }),
  ],
};
