import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { eventCatalogRoutes } from "./routes";

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
];
