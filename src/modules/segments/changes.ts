import { type ChangeKind, dryRun } from "../../lib/changes";
import { notFound } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { SegmentUpdateChange } from "./contract";
import type { SegmentPatch, SegmentsService } from "./service";
import { findSegment } from "./store";

type UpdateBody = { name: string; patch: SegmentPatch };

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
    },
  ];
}
