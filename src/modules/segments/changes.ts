import { type ChangeKind, dryRun } from "../../lib/changes";
import { notFound } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import type { Queryable } from "../../lib/store";
import { SegmentUpdateChange } from "./contract";
import { type SegmentPatch, type SegmentsService, idsAfter } from "./service";
import { findSegment } from "./store";

type UpdateBody = { name: string; patch: SegmentPatch };

/** Id lists up to this long are shown whole in a change request's diff; longer ones as counts and this many ids added and removed. */
const IDS_SHOWN = 100;

/**
 * A patch as a change request shows it: for each field it sets, what the segment holds now and what it would hold.
 * The ids (`ids`, `addIds`, `removeIds`) are one field, the resulting list: whole while both lists are short, else
 * `{count}` now and `{count, added, removed}` proposed, each sample bounded (a segment holds up to 100,000 ids).
 */
async function views(q: Queryable, projectId: string, body: UpdateBody): Promise<{ current: Record<string, unknown>; proposed: Record<string, unknown> }> {
  const row = await findSegment(q, projectId, body.name);
  if (!row) throw notFound(`Segment ${body.name} not found`);
  const current: Record<string, unknown> = {};
  const proposed: Record<string, unknown> = {};
  const { patch } = body;
  for (const f of ["name", "description", "attribute"] as const) {
    if (patch[f] === undefined) continue;
    current[f] = row[f];
    proposed[f] = patch[f];
  }
  if (patch.conditions !== undefined) {
    current.conditions = JSON.parse(row.conditions) as unknown;
    proposed.conditions = patch.conditions;
  }
  const stored = JSON.parse(row.ids) as string[];
  const next = idsAfter(stored, patch);
  if (next !== undefined) {
    if (stored.length <= IDS_SHOWN && next.length <= IDS_SHOWN) {
      current.ids = stored;
      proposed.ids = next;
    } else {
      const was = new Set(stored);
      const now = new Set(next);
      const added = next.filter((id) => !was.has(id));
      const removed = stored.filter((id) => !now.has(id));
      current.ids = { count: stored.length };
      proposed.ids = {
        count: next.length,
        added: added.slice(0, IDS_SHOWN),
        removed: removed.slice(0, IDS_SHOWN),
        ...(added.length > IDS_SHOWN ? { addedNotShown: added.length - IDS_SHOWN } : {}),
        ...(removed.length > IDS_SHOWN ? { removedNotShown: removed.length - IDS_SHOWN } : {}),
      };
    }
  }
  return { current, proposed };
}

/** `segment.update`: a patch to a segment; it changes every env whose rules name it (env null). */
export function segmentChanges(service: SegmentsService, ctx: Pick<ServiceContext, "store">): ChangeKind<UpdateBody>[] {
  const apply = (projectId: string, body: UpdateBody, actor: { email: string; type: string }) => service.update(projectId, body.name, body.patch, actor);
  return [
    {
      kind: "segment.update",
      schema: SegmentUpdateChange,
      describe: (_projectId, body) => ({ target: { type: "segment", name: body.name }, env: null, summary: `${body.name}: ${Object.keys(body.patch).join(", ") || "nothing"}` }),
      check: (projectId, body) => dryRun(ctx.store, async () => void (await apply(projectId, body, { email: "check@svc.local", type: "system" }))),
      // Segments keep no versions: their last change's time stands for one.
      fingerprint: async (q, projectId, body) => {
        const row = await findSegment(q, projectId, body.name);
        if (!row) throw notFound(`Segment ${body.name} not found`);
        return `updated ${row.updated_at}`;
      },
      apply,
      description: "A segment's description, conditions or ids (every env whose rules name it)",
      current: async (q, projectId, body) => (await views(q, projectId, body)).current,
      proposed: async (q, projectId, body) => (await views(q, projectId, body)).proposed,
    },
  ];
}
