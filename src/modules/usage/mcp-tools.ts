import { z } from "zod";
import { dataOf } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { usageRoutes } from "./routes";

const flags = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof usageRoutes>>().api.admin.flags;

/** Stale flags, for an agent cleaning up: it reads the list; removing a flag stays a person's (or another tool's) call. */
export const usageTools = [
  defineTool({
    name: "list_stale_flags",
    title: "List stale flags",
    description:
      "Killswitches, gates and configs that are stale on an env, each with its reasons: one_value (it has served one value to everyone for the project's staleAfterDays, since its last publish) " +
      "and/or not_evaluated (no evaluation counted on that env for that long), its last evaluation and last publish. Candidates for removal from code and from svc.",
    input: { env: z.enum(["dev", "staging", "prod"]).optional().describe("One env; default every env"), project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ env, project_id }, open) {
      return await dataOf(flags(open, project_id).stale.get({ query: env ? { env } : {} }));
    },
  }),
];
