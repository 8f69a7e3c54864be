import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { eventCatalogRoutes, eventCountRoutes } from "./routes";

/** The event catalog routes, typed from their own schemas. */
const events = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof eventCatalogRoutes>>().api.admin.events;

export const eventCatalogTools = [
  defineTool({
    name: "list_events",
    title: "List catalogued events",
    description:
      "The project's event catalog: the analytics event names metrics can count, with folder, description and properties (name, type, required). Rows with pending: 1 were discovered from ingest and are not approved yet; approve one with register_event.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/folder/description") },
    annotations: READ_ONLY,
    untrusted: "event and property names that SDKs reported (rows with pending: 1 came from ingest, which browser keys reach)",
    async run({ project_id, q }, open) {
      return dataOf(events(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "register_event",
    title: "Register or approve an event",
    description: "Registers an event name in the catalog, or approves a pending one of that name. Properties: [{name, type: string|number|boolean, required?, description?}].",
    input: {
      project_id: projectIdArg,
      name: z.string().min(1).max(128),
      folder: z.string().max(100).optional(),
      description: z.string().max(1000).optional(),
      properties: z
        .array(z.object({ name: z.string(), type: z.enum(["string", "number", "boolean"]), required: z.boolean().optional(), description: z.string().optional() }))
        .optional(),
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ project_id, ...body }, open) {
      return dataOf(events(open, project_id).post(body));
    },
  }),
  defineTool({
    name: "event_counts",
    title: "Count events per name",
    description: "How many events of each name arrived in the last 24 hours and the last 7 days (whole UTC hours, the current one included). Names with no events in 7 days are absent.",
    input: { project_id: projectIdArg },
    annotations: READ_ONLY,
    untrusted: "event names that SDKs reported (ingest, which browser keys reach)",
    async run({ project_id }, open) {
      return dataOf(open(project_id).api<ReturnType<typeof eventCountRoutes>>().api.admin["event-counts"].get());
    },
  }),
  defineTool({
    name: "recent_events",
    title: "Read an event's newest raw events",
    description:
      "The newest raw events of one catalogued event name, newest first: time, unitId, value and properties as sent. At most `limit` (1 to 100, default 25) per call; pass the answer's `next` as `before` for older ones (null: no more).",
    input: {
      name: z.string().min(1).max(128).describe("Event name, id or unique id prefix"),
      limit: z.number().int().min(1).max(100).optional(),
      before: z.string().max(200).optional().describe("The `next` of the previous answer"),
      project_id: projectIdArg,
    },
    annotations: READ_ONLY,
    untrusted: "unit ids, property names and values that SDK clients sent (ingest, which browser keys reach)",
    async run({ name, limit, before, project_id }, open) {
      return dataOf(events(open, project_id)({ id: seg(name) }).recent.get({ query: { limit: limit?.toString(), before } }));
    },
  }),
];
