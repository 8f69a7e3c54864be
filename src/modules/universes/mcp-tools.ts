import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { universeRoutes } from "./routes";

/** The universe routes, typed from their own schemas. */
const universes = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof universeRoutes>>().api.admin.universes;

export const universeTools = [
  defineTool({
    name: "list_universes",
    title: "List universes",
    description:
      "The project's universes: unit spaces experiments share. Each hashes a unit id (unit_type user_id or account_id) with its salt into one of 10,000 segments; holdout_range [start, end) is the segments given to no experiment (null: none).",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on the name") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(universes(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "get_universe",
    title: "Get a universe",
    description: "One universe: unit_type, holdout_range ([start, end) in segments 0..10,000, or null), salt, when created and last changed.",
    input: { name: z.string().min(1).max(128).describe("Universe name or id"), project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return dataOf(universes(open, project_id)({ id: seg(name) }).get());
    },
  }),
];
