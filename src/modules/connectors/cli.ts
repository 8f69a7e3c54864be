import type { Static } from "elysia";
import { UsageError } from "../../lib/config";
import { OUTBOX_EVENT_TYPES } from "../../lib/outbox-types";
import { type SvcClient, dataOf, seg } from "../../cli/client";
import type { ConnectorDetailSchema, ConnectorSchema, DeliverySchema, TestFireBody, UpdateConnectorBody } from "./contract";
import type { connectorRoutes } from "./routes";
import { CLIENT_FLAGS, QUERY_FLAG, emit, flagFile, intFlag, jsonFlag, list, openClient, str, table, when, deleteCommand, oneOf } from "../../cli/client-command";
import type { ArgValues, Command, Flag } from "../../cli/command";

type Connector = Static<typeof ConnectorSchema>;
type ConnectorDetail = Static<typeof ConnectorDetailSchema>;
type Delivery = Static<typeof DeliverySchema>;
/** What create and update share; the server checks the event types and settings (its VALIDATION names the field). */
type Fields = Omit<Static<typeof UpdateConnectorBody>, "enabled">;

/** The connector routes, typed from their own schemas. */
const connectors = (client: SvcClient) => client.api<ReturnType<typeof connectorRoutes>>().api.admin.connectors;
/** One connector's routes: its id, as one path segment. */
const one = (client: SvcClient, id: string) => connectors(client)({ id: seg(id) });
const PROVIDERS = ["google_sheets", "linear", "slack", "claude_trigger", "cursor_trigger", "github_trigger", "jules_trigger", "webhook"] as const;

/** Credential flags → body fields. A value `@FILE` is read from that file (keeps secrets out of shell history). */
const CREDENTIAL_FLAGS: Record<string, { field: string; help: string }> = {
  "fire-token": { field: "fireToken", help: "claude_trigger: the routine's API trigger token" },
  "api-key": { field: "apiKey", help: "cursor_trigger / jules_trigger: the vendor API key" },
  "app-id": { field: "appId", help: "github_trigger: GitHub App id (with --private-key)" },
  "private-key": { field: "privateKey", help: "github_trigger: the App's private key, PEM (use @FILE)" },
  "installation-id": { field: "installationId", help: "github_trigger: the App's installation id (optional)" },
  "access-token": { field: "accessToken", help: "github_trigger: a user access token instead of an App" },
};

const credentialFlags: Record<string, Flag> = Object.fromEntries(
  Object.entries(CREDENTIAL_FLAGS).map(([flag, c]) => [flag, { type: "string", value: "VALUE", help: `${c.help}; @FILE reads it from a file` } satisfies Flag]),
);

const EVENT_FLAG: Flag = { type: "string", value: "TYPE", multiple: true, help: `An event type it hears: ${OUTBOX_EVENT_TYPES.join(", ")}` };
const CONFIG_FLAG: Flag = { type: "string", value: "JSON", help: 'Provider settings as JSON (or @FILE), e.g. \'{"url":"https://hooks.example.com/svc"}\'' };
const SET_FLAG: Flag = { type: "string", value: "KEY=VALUE", multiple: true, help: "One config setting (repeatable), e.g. --set channel=#alerts" };

function secretValue(text: string, flag: string): string {
  return text.startsWith("@") ? flagFile(text, flag).replace(/\r?\n$/, "") : text;
}

function credentials(values: ArgValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [flag, c] of Object.entries(CREDENTIAL_FLAGS)) {
    const v = str(values, flag);
    if (v !== undefined) out[c.field] = secretValue(v, flag);
  }
  return out;
}

function config(values: ArgValues): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (values.config !== undefined) {
    const parsed = jsonFlag(values.config, "config");
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("--config must be a JSON object");
    out = { ...(parsed as Record<string, unknown>) };
  }
  for (const pair of list(values, "set")) {
    const at = pair.indexOf("=");
    if (at < 1) throw new UsageError(`--set must be KEY=VALUE (got "${pair}")`);
    out ??= {};
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/** The body fields create and update share: credentials, --name, --event, --config and --set (only those given). */
function connectorFields(values: ArgValues): Fields {
  const body: Record<string, unknown> = { ...credentials(values) };
  const name = str(values, "name");
  if (name !== undefined) body.name = name;
  const events = list(values, "event");
  if (events.length > 0) body.events = events;
  const cfg = config(values);
  if (cfg !== undefined) body.config = cfg;
  // As given: the event types are checked by the server, which names the field.
  return body as Fields;
}

const state = (c: Connector) => (c.enabled ? "enabled" : c.kind === "oauth" && !c.hasCredentials ? "not connected" : "disabled");
const target = (c: Connector) => {
  const cfg = c.config;
  const v = cfg.url ?? cfg.channel ?? cfg.teamId ?? cfg.spreadsheetId ?? cfg.routineId ?? cfg.repoUrl ?? (cfg.owner ? `${cfg.owner}/${cfg.repo}` : undefined) ?? cfg.source;
  return v === undefined ? "" : String(v);
};

function connectorText(c: Connector | ConnectorDetail): string {
  const lines = [
    `${c.name} (${c.id})`,
    `  provider:    ${c.provider} (${c.kind})`,
    `  state:       ${state(c)}`,
    `  events:      ${c.events.join(", ") || "(none)"}`,
    `  config:      ${Object.keys(c.config).length ? JSON.stringify(c.config) : "{}"}`,
    `  credentials: ${c.hasCredentials ? `${c.credentialFields.join(", ")} (stored encrypted, never shown)` : "none"}`,
  ];
  if ("deliveries" in c) lines.push(`  deliveries:  ${c.deliveries.delivered} delivered, ${c.deliveries.pending} pending, ${c.deliveries.failed} failed`);
  lines.push(`  created:     ${when(c.createdAt)}`, `  updated:     ${when(c.updatedAt)}`);
  if (c.kind === "oauth" && !c.hasCredentials) lines.push("  connect it from the dashboard (Connectors → Connect), which runs the provider's OAuth flow");
  return lines.join("\n");
}

function deliveryLine(d: Delivery): (string | number | null)[] {
  return [when(d.createdAt), d.eventType + (d.test ? " (test)" : ""), d.status, d.attempts, d.lastStatus, d.lastError ?? "", d.id];
}

export const connectorsCommand: Command = {
  name: "connectors",
  summary: "Where events go (Slack, Linear, Sheets, agent triggers, webhooks): list, get, create, update, enable, disable, delete, deliveries, test",
  details: [
    `Providers: ${PROVIDERS.join(", ")}. OAuth providers (google_sheets, linear, slack) are created disabled and connected from the dashboard; triggers and webhooks work at once.`,
    "Credentials are stored encrypted and never shown again; a webhook's signing secret is printed once, at create.",
  ],
  examples: [
    "svc connectors create webhook --name intake --event bug.created --set url=https://hooks.example.com/svc",
    "svc connectors create github_trigger --set owner=acme --set repo=web --access-token @token.txt",
    "svc connectors deliveries 0b6f0f7e-… --status failed",
    "svc connectors test 0b6f0f7e-…",
  ],
  subcommands: [
    {
      name: "list",
      summary: "List the project's connectors",
      examples: ["svc connectors list", "svc connectors list --query slack --json"],
      flags: { query: { ...QUERY_FLAG, help: "Only connectors whose name or provider contains TEXT" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "query");
        // An empty query is left out, as before.
        const all = await dataOf(connectors(openClient(values)).get({ query: { q: q || undefined } }));
        emit(values.json, all, () => {
          if (all.length === 0) return q ? `No connectors match "${q}".` : "No connectors yet; create one with `svc connectors create <provider>`.";
          return table(
            ["ID", "NAME", "PROVIDER", "STATE", "EVENTS", "TARGET"],
            all.map((c) => [c.id, c.name, c.provider, state(c), c.events.join(","), target(c)]),
          );
        });
        return 0;
      },
    },
    {
      name: "get",
      summary: "Show one connector with its delivery counts (never its credentials)",
      args: ["<id>"],
      examples: ["svc connectors get 0b6f0f7e-…", "svc connectors get 0b6f0f7e-… --json"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const c = await dataOf(one(openClient(values), positionals[0]!).get());
        emit(values.json, c, () => connectorText(c));
        return 0;
      },
    },
    {
      name: "create",
      summary: "Create a connector (a trigger with an existing target is updated instead)",
      args: ["<provider>"],
      details: [
        "webhook: --name, --event, --set url=…; prints the signing secret once. OAuth (google_sheets, linear, slack): --name and --event; connect it from the dashboard.",
        "claude_trigger: --set routineId=… [--fire-token]. cursor_trigger: --set repoUrl=… --api-key. github_trigger: --set owner=… --set repo=… with --app-id and --private-key @key.pem, or --access-token. jules_trigger: --set source=… --api-key.",
      ],
      examples: ["svc connectors create slack --name alerts --event alert.firing --event alert.resolved", "svc connectors create claude_trigger --set routineId=trig_01abc --fire-token @fire-token.txt"],
      flags: { name: { type: "string", value: "NAME", help: "Its name (default for triggers: provider and target)" }, event: EVENT_FLAG, config: CONFIG_FLAG, set: SET_FLAG, ...credentialFlags, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const provider = oneOf(positionals[0]!, PROVIDERS, "<provider>");
        const body = { provider, ...connectorFields(values) };
        const client = openClient(values);
        const created = await dataOf(connectors(client).post(body));
        const c = await dataOf(one(client, created.id).get());
        emit(values.json, created.secret ? { ...c, secret: created.secret } : c, () => {
          const lines = [`Saved connector ${c.name} (${c.id}): ${c.provider}, ${state(c)}.`];
          if (created.secret) lines.push(`Signing secret (shown once; verify X-Svc-Signature with it): ${created.secret}`);
          if (c.kind === "oauth") lines.push("Connect it from the dashboard (Connectors → Connect) to enable it.");
          return lines.join("\n");
        });
        return 0;
      },
    },
    {
      name: "update",
      summary: "Change a connector's name, events, config or credentials",
      args: ["<id>"],
      details: ["--event replaces the list; --config and --set are merged into the stored config (a JSON null removes a setting); credential flags replace those fields."],
      examples: ["svc connectors update 0b6f… --set channel=#ops", "svc connectors update 0b6f… --event bug.created --event error.new"],
      flags: { name: { type: "string", value: "NAME", help: "A new name for the connector" }, event: EVENT_FLAG, config: CONFIG_FLAG, set: SET_FLAG, ...credentialFlags, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const body = connectorFields(values);
        if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give --name, --event, --config, --set or a credential flag");
        const c = await dataOf(one(openClient(values), positionals[0]!).patch(body));
        emit(values.json, c, () => `Updated connector ${c.name}:\n${connectorText(c).split("\n").slice(1).join("\n")}`);
        return 0;
      },
    },
    ...(["enable", "disable"] as const).map(
      (verb): Command => ({
        name: verb,
        summary: verb === "enable" ? "Enable a connector (an OAuth one must be connected first)" : "Disable a connector (queued deliveries wait)",
        args: ["<id>"],
        examples: [`svc connectors ${verb} 0b6f0f7e-…`],
        flags: { ...CLIENT_FLAGS },
        async run({ values, positionals }) {
          const routes = one(openClient(values), positionals[0]!);
          const c = await dataOf(verb === "enable" ? routes.enable.post() : routes.disable.post());
          emit(values.json, c, () => `Connector ${c.name} is ${state(c)}.`);
          return 0;
        },
      }),
    ),
    deleteCommand({
      summary: "Delete a connector with its delivery log",
      args: ["<id>"],
      examples: ["svc connectors delete 0b6f0f7e-…", "svc connectors delete 0b6f0f7e-… --yes --json"],
      question: (id) => `Delete connector ${id} and its delivery log?`,
      remove: async (client, id) => await dataOf(one(client, id).delete()),
      done: (id) => [{ id, deleted: true }, `Deleted connector ${id}.`],
    }),
    {
      name: "deliveries",
      summary: "The connector's delivery log, newest first",
      args: ["<id>"],
      examples: ["svc connectors deliveries 0b6f…", "svc connectors deliveries 0b6f… --status failed --limit 50 --json"],
      flags: {
        status: { type: "string", value: "STATUS", help: "Only pending, delivered or failed" },
        limit: { type: "string", value: "N", help: "How many, 1 to 100 (default 20)" },
        ...CLIENT_FLAGS,
      },
      async run({ values, positionals }) {
        const status = str(values, "status");
        if (status !== undefined && !["pending", "delivered", "failed"].includes(status)) throw new UsageError(`--status must be pending, delivered or failed (got "${status}")`);
        const limit = intFlag(values.limit, "limit", 1, 100);
        // The limit goes as the text the query takes.
        const query = { status: status as "pending" | "delivered" | "failed" | undefined, limit: limit?.toString() };
        const all = await dataOf(one(openClient(values), positionals[0]!).deliveries.get({ query }));
        emit(values.json, all, () =>
          all.length === 0 ? "No deliveries yet." : table(["WHEN", "EVENT", "STATUS", "ATTEMPTS", "HTTP", "ERROR", "ID"], all.map(deliveryLine), { full: ["ID"] }),
        );
        return 0;
      },
    },
    {
      name: "test",
      summary: "Test-fire: send a sample event through the real delivery path and show the attempt",
      args: ["<id>"],
      examples: ["svc connectors test 0b6f…", "svc connectors test 0b6f… --type alert.firing --json"],
      flags: { type: { type: "string", value: "TYPE", help: "The sample's event type (default the connector's first)" }, ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const body: Static<typeof TestFireBody> = {};
        const type = str(values, "type");
        // As given: the server checks the event type and names the field.
        if (type !== undefined) body.type = type as Static<typeof TestFireBody>["type"];
        const result = await dataOf(one(openClient(values), positionals[0]!).test.post(body));
        const d = result.delivery;
        emit(values.json, result, () => {
          if (!result.done) return `Queued test delivery ${d.id}; not attempted yet (see \`svc connectors deliveries ${positionals[0]}\`).`;
          const last = d.log.at(-1);
          return d.status === "delivered"
            ? `Delivered ${d.eventType} test (${d.id}): HTTP ${d.lastStatus} in ${last?.durationMs ?? "?"} ms.`
            : `Test delivery ${d.id} failed: ${d.lastError ?? "unknown error"}${last?.response ? `\n  answer: ${last.response}` : ""}`;
        });
        return result.done && d.status === "delivered" ? 0 : 1;
      },
    },
  ],
};
