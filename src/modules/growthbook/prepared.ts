import { acceptsGzip, etagMatches } from "../../lib/http";
import type { SnapshotEntry } from "../delivery/snapshot";
import { mapSnapshot, type Unmapped } from "./mapping";

// Origin is listed because browser replies carry Access-Control-Allow-Origin for the caller's origin.
const VARY = "Accept-Encoding, Origin";

/**
 * One snapshot entry's GrowthBook payload, mapped once (an entry never changes) with its replies prepared,
 * so a poll, a 304 included, clones a Response and touches neither the store nor the mapping.
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
  notModified: Response;
  plain: Response;
  gzip: Response;
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
    notModified: new Response(null, { status: 304, headers: base }),
    plain: new Response(new Blob([body]), { headers: { ...base, "content-type": "application/json" } }),
    gzip: new Response(new Blob([Bun.gzipSync(body)]), { headers: { ...base, "content-type": "application/json", "content-encoding": "gzip" } }),
  };
  entries.set(entry, gb);
  return gb;
}

const PLAIN_GZIP = /(?:^|,)\s*(?:gzip|\*)\s*(?:,|$)/i;
function takesGzip(acceptEncoding: string | null): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.includes(";") ? acceptsGzip(acceptEncoding) : PLAIN_GZIP.test(acceptEncoding);
}

/** The features reply: 304 when If-None-Match names the current payload, else its bytes (gzip when taken). Shared by the route and the fast path. */
export function featuresResponse(entry: SnapshotEntry, headers: Headers, requestId?: string): Response {
  const gb = growthbookEntry(entry);
  const response = (etagMatches(headers.get("if-none-match"), gb.etag) ? gb.notModified : takesGzip(headers.get("accept-encoding")) ? gb.gzip : gb.plain).clone();
  if (requestId) response.headers.set("x-request-id", requestId);
  return response;
}
