import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, envArg, projectIdArg } from "../../mcp/tool";
import type { killswitchRoutes } from "./routes";

/** The killswitch routes, typed from their own schemas. */
const killswitches = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof killswitchRoutes>>().api.admin.killswitches;

export const killswitchTools = [
  defineTool({
    name: "list_killswitches",
    title: "List killswitches",
    description: "Killswitches of the project with their value, sub-switches and version on every env (dev, staging, prod).",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(killswitches(open, project_id).get({ query: { q } }));
    },
  }),
  defineTool({
    name: "toggle_killswitch",
    title: "Toggle a killswitch",
    description:
      "Publishes a new version of a killswitch's flat value, or of one sub-switch, on one env (default prod). Without `value` it flips the current value; with `value` it sets exactly that, so a retry cannot undo the first call. Live SDKs see the change at once.",
    input: {
      name: z.string().min(1).max(128).describe("Killswitch name or id"),
      env: envArg.optional().describe("Default prod"),
      switch_key: z.string().min(1).max(128).optional().describe("Target one sub-switch instead of the flat value"),
      value: z.boolean().optional().describe("Publish exactly this value; omit to flip"),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    async run({ name, env, switch_key, value, project_id }, open) {
      return dataOf(killswitches(open, project_id)({ id: seg(name) }).toggle.post({ env, switchKey: switch_key, value }));
    },
  }),
];
