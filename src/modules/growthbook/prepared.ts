import { etagMatches } from "../../lib/http-values";
import { type PreparedReply, prepareNotModified, prepareReply, sendPrepared, takesGzip } from "../../lib/prepared-reply";
import type { SnapshotEntry } from "../delivery/snapshot";
import { mapSnapshot, type Unmapped } from "./mapping";

// Origin is listed because browser replies carry Access-Control-Allow-Origin for the caller's origin.
const VARY = "Accept-Encoding, Origin";

/**
 * One snapshot entry's GrowthBook payload, mapped once (an entry never changes) with its replies prepared,
 * so a poll, a 304 included, sends a prepared reply (lib/prepared-reply.ts) and touches neither the store nor
 * the mapping.
 */
export type GrowthbookEntry = {
  /** The snapshot's tag with `-gb` inside the quotes: the two bodies differ, so their tags must. */
  etag: string;
  json: string;
  unmapped: Unmapped[];
  /** What the payload holds (features, saved groups) and its bytes uncompressed: the admin's status page shows them. */
  counts: { features: number; savedGroups: number; bytes: number };
  /** `event: features` with the payload, as GrowthBook's SDKs listen for on `/sub/{key}`. */
  event: Uint8Array;
  notModified: { clone: Response };
  plain: PreparedReply;
  gzip: PreparedReply;
};

const entries = new WeakMap<SnapshotEntry, GrowthbookEntry>();
const encoder = new TextEncoder();

export function growthbookEntry(entry: SnapshotEntry): GrowthbookEntry {
  let gb = entries.get(entry);
  if (gb) return gb;
  const { payload, unmapped } = mapSnapshot(entry.snapshot);
  const json = JSON.stringify(payload);
  const body = encoder.encode(json);
  const etag = `${entry.etag.slice(0, -1)}-gb"`;
  // `x-sse-support: enabled` is what makes GrowthBook's SDKs open `/sub/{key}` (they poll otherwise).
  const base = { etag, "cache-control": "no-cache", vary: VARY, "x-sse-support": "enabled" };
  gb = {
    etag,
    json,
    unmapped,
    counts: { features: Object.keys(payload.features).length, savedGroups: Object.keys(payload.savedGroups ?? {}).length, bytes: body.byteLength },
    event: encoder.encode(`id: ${entry.eventId}\nevent: features\ndata: ${json}\n\n`),
    notModified: prepareNotModified(base),
    plain: prepareReply(body, { ...base, "content-type": "application/json" }),
    gzip: prepareReply(Bun.gzipSync(body), { ...base, "content-type": "application/json", "content-encoding": "gzip" }),
  };
  entries.set(entry, gb);
  return gb;
}

/** The features reply: 304 when If-None-Match names the current payload, else its bytes (gzip when taken). Shared by the route and the fast path. */
export function featuresResponse(entry: SnapshotEntry, headers: Headers, requestId?: string): Response {
  const gb = growthbookEntry(entry);
  return sendPrepared(etagMatches(headers.get("if-none-match"), gb.etag) ? gb.notModified : takesGzip(headers.get("accept-encoding")) ? gb.gzip : gb.plain, requestId);
}
