import { t } from "elysia";
import { QueryObject } from "../../lib/http";

const EXAMPLE = {
  id: "rly_4kP9xQ2mZ7vB1nC8dF3h",
  name: "edge-fra-1",
  version: "1.4.0",
  address: "10.0.4.17",
  firstSeenAt: "2026-11-20T08:02:11.412Z",
  lastSeenAt: "2026-11-28T09:12:44.120Z",
  lastStreamAt: "2026-11-28T09:12:40.003Z",
  streams: ["dev", "prod", "staging"],
  connected: true,
  stale: false,
};

export const RelaySchema = t.Object(
  {
    id: t.String({ description: "The relay's own id, made on its first start and kept in its relay.db" }),
    name: t.String({ description: "--relay-name (SERVICE_RELAY_NAME), else its host name: text the relay sends, shown as text" }),
    version: t.String({ description: "The svc version the relay runs" }),
    address: t.String({ description: "The relay's address as this server sees it (the peer, or what trusted proxies forwarded for)" }),
    firstSeenAt: t.String(),
    lastSeenAt: t.String({ description: "The last call the relay made (streams, key lookups, forwards), to within 30 s" }),
    lastStreamAt: t.Union([t.String(), t.Null()], { description: "When a stream of the relay was last seen open (null: never)" }),
    streams: t.Array(t.String(), { description: "The envs the relay streams from the server that wrote last" }),
    connected: t.Boolean({ description: "A stream of the relay is open on this server now, or was seen open within the last 90 s" }),
    stale: t.Boolean({ description: "Not connected: the relay serves its last snapshots (or is gone)" }),
  },
  { title: "EdgeRelay", examples: [EXAMPLE] },
);

export const RelaysSchema = t.Array(RelaySchema, { examples: [[EXAMPLE]] });

export const RelaysQuery = QueryObject({
  q: t.Optional(t.String({ maxLength: 100, description: "Case-insensitive substring over id, name and address" })),
});

export const RelayParam = t.Object({ id: t.String({ minLength: 1, maxLength: 64, description: "The relay's id (`svc relays list`)" }) });
