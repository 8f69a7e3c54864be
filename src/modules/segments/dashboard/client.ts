import { apiOf, call } from "../../../web/dashboard/api";
import { type IdsPatch, chunkIds, firstBudget, idPatches } from "../ids-file";
import type { segmentRoutes } from "../routes";

export const segmentApi = apiOf<ReturnType<typeof segmentRoutes>>();

export type SegmentSummary = NonNullable<Awaited<ReturnType<typeof segmentApi.api.admin.segments.get>>["data"]>[number];
export type Segment = SegmentSummary & { ids: string[] };
export type Condition = SegmentSummary["conditions"][number];

export const loadSegments = () => call(segmentApi.api.admin.segments.get({ query: {} }));
export const loadSegment = (ref: string) => call(segmentApi.api.admin.segments({ id: ref }).get());

const NUMBER = new Intl.NumberFormat("en");
/** "1 id", "12,345 ids". */
export const idsCount = (n: number) => `${NUMBER.format(n)} id${n === 1 ? "" : "s"}`;

/** `email ends_with "@acme.com" and plan eq "pro"`; none reads "none". */
export function conditionsText(conditions: readonly Condition[]): string {
  if (conditions.length === 0) return "none";
  return conditions.map((c) => (c.value === undefined ? `${c.attr} ${c.op}` : `${c.attr} ${c.op} ${JSON.stringify(c.value)}`)).join(" and ");
}

type Fields = { name?: string; description?: string; attribute?: string; conditions?: Condition[] };

/** Creates a segment with its ids: the first part in the POST, the rest added with addIds (each body under the limit). */
export async function createSegment(fields: Fields & { name: string }, ids: readonly string[]): Promise<{ id: string; name: string }> {
  const chunks = chunkIds(ids, firstBudget(fields));
  const created = await call(segmentApi.api.admin.segments.post({ ...fields, ...(chunks.length ? { ids: chunks[0] } : {}) }));
  for (const addIds of chunks.slice(1)) await call(segmentApi.api.admin.segments({ id: created.id }).patch({ addIds }));
  return created;
}

/** Changes a segment: its fields and its ids (replaced, added or removed), in as many bodies as the ids need. */
export async function updateSegment(segment: Segment, fields: Fields, change: { replace?: readonly string[]; add?: readonly string[]; remove?: readonly string[] }): Promise<Segment> {
  let saved = segment;
  for (const patch of idPatches<Fields & IdsPatch>(fields, { ...change, current: segment.ids })) {
    saved = await call(segmentApi.api.admin.segments({ id: segment.id }).patch(patch));
  }
  return saved;
}
