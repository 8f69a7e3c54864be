import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { growthbookAdminRoutes } from "./admin-routes";

const growthbook = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof growthbookAdminRoutes>>().api.admin.growthbook;

/** What GrowthBook's SDKs get, for an agent checking a GrowthBook integration before or after a change. */
export const growthbookTools = [
  defineTool({
    name: "growthbook_status",
    title: "GrowthBook SDK status",
    description:
      "What GrowthBook's SDKs (apiHost = this server, clientKey = a server SDK key) load from GET /api/features/{key} on an env: its revision and ETag, how many features and saved groups, the payload's bytes, " +
      "and unmapped: each construct they cannot evaluate as svc does ({feature, construct, served}: what they get instead). An empty unmapped list means every flag evaluates as in svc's own SDK.",
    input: { env: z.enum(["dev", "staging", "prod"]).optional().describe("The env; default the project's defaultEnv"), project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ env, project_id }, open) {
      return await dataOf(growthbook(open, project_id).get({ query: env ? { env } : {} }));
    },
  }),
];
