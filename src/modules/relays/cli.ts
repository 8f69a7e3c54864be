import { type SvcClient, dataOf, seg } from "../../cli/client";
import { CLIENT_FLAGS, emit, openClient, str, table, when } from "../../cli/client-command";
import type { Command } from "../../cli/command";
import type { relaysRoutes } from "./routes";

const relaysApi = (client: SvcClient) => client.api<ReturnType<typeof relaysRoutes>>().api.admin.relays;

const EMPTY = "No edge relay has called this server in the last 30 days. Start one with: svc serve --relay <this server's URL> --key <server key>";

export const relaysCommand: Command = {
  name: "relays",
  summary: "Edge relays serving the project, as the upstream sees them: list (connected or stale), forget",
  details: [
    "A relay (`svc serve --relay URL --key KEY`) names itself on every call it makes to its upstream: its id (kept in its relay.db), its name (--relay-name, else its host name) and its version. The upstream lists it as connected while one of its streams is open (or was, within the last 90 s), else stale. A relay of a relay is listed by the relay it follows.",
  ],
  examples: ["svc relays list", "svc relays list --json", "svc relays forget rly_4kP9xQ2mZ7vB1nC8dF3h"],
  subcommands: [
    {
      name: "list",
      summary: "Edge relays seen in the last 30 days: connected or stale, version, address, last seen",
      examples: ["svc relays list", "svc relays list --q fra --json"],
      flags: { q: { type: "string", value: "TEXT", help: "Only relays whose id, name or address contains TEXT (case-insensitive)" }, ...CLIENT_FLAGS },
      async run({ values }) {
        const q = str(values, "q");
        const relays = await dataOf(relaysApi(openClient(values)).get({ query: q ? { q } : {} }));
        emit(values.json, relays, () =>
          relays.length === 0
            ? EMPTY
            : table(
                ["ID", "NAME", "STATE", "VERSION", "ADDRESS", "STREAMS", "LAST SEEN"],
                relays.map((r) => [r.id, r.name, r.connected ? "connected" : "stale", r.version, r.address, r.streams.join(",") || "-", when(r.lastSeenAt)]),
              ),
        );
        return 0;
      },
    },
    {
      name: "forget",
      summary: "Delete a relay's sighting (a relay still running is listed again at its next call)",
      args: ["<id>"],
      examples: ["svc relays forget rly_4kP9xQ2mZ7vB1nC8dF3h"],
      flags: { ...CLIENT_FLAGS },
      async run({ values, positionals }) {
        const id = positionals[0]!;
        await dataOf(relaysApi(openClient(values))({ id: seg(id) }).delete());
        emit(values.json, { id, deleted: true }, () => `Forgot the relay ${id}.`);
        return 0;
      },
    },
  ],
};
