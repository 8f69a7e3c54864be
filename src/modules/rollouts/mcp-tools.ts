import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { DESTRUCTIVE, READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { rolloutRoutes } from "./routes";

/** The rollout routes, typed from their own schemas. */
const rollouts = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof rolloutRoutes>>().api.admin.rollouts;
const rolloutRef = z.string().min(1).max(128).describe("Rollout id, unique id prefix, or the name of the gate or config it rolls out");
const reason = z.string().max(1000).optional().describe("Why (kept in the outcome and the audit trail)");

export const rolloutTools = [
  defineTool({
    name: "list_rollouts",
    title: "List guarded rollouts",
    description:
      "The project's guarded rollouts, newest first: each releases a gate's new rules or a config's new value on one env in stages (percent and minutes each), comparing the units that have it with those that do not on the error rate and chosen metrics. " +
      "status: scheduled, running (stage n, percent), paused, completed (published for everyone), rolled_back. lastCheck holds the newest comparison.",
    input: {
      project_id: projectIdArg,
      q: z.string().max(100).optional().describe("Substring of the gate's or config's name, description or id"),
      status: z.enum(["scheduled", "running", "paused", "completed", "rolled_back"]).optional(),
    },
    annotations: READ_ONLY,
    async run({ project_id, q, status }, open) {
      return dataOf(rollouts(open, project_id).get({ query: { q: q || undefined, status } }));
    },
  }),
  defineTool({
    name: "get_rollout",
    title: "Get a guarded rollout",
    description:
      "One rollout: subject (gate or config) and env, change and previous value, stages with the current stage and percent, watched metrics (direction, tolerance), onRegression, outcome (who, why, the regression's metric, estimate and interval) and lastCheck: per metric both groups' units and means, the difference new − old with its always-valid interval, regression true/false, and the decision.",
    input: { rollout: rolloutRef, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ rollout, project_id }, open) {
      return dataOf(rollouts(open, project_id)({ id: seg(rollout) }).get());
    },
  }),
  defineTool({
    name: "pause_rollout",
    title: "Pause a rollout",
    description: "running → paused: units keep what the current stage gives them; nothing advances until resume_rollout.",
    input: { rollout: rolloutRef, reason, project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ rollout, reason, project_id }, open) {
      return dataOf(rollouts(open, project_id)({ id: seg(rollout) }).pause.post(reason ? { reason } : {}));
    },
  }),
  defineTool({
    name: "resume_rollout",
    title: "Resume a rollout",
    description: "paused → running: the current stage's minutes count again from now.",
    input: { rollout: rolloutRef, project_id: projectIdArg },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ rollout, project_id }, open) {
      return dataOf(rollouts(open, project_id)({ id: seg(rollout) }).resume.post({}));
    },
  }),
  defineTool({
    name: "rollback_rollout",
    title: "Roll back a rollout",
    description: "Every unit gets the old value again at once (a new snapshot revision; audited; connectors told). The rollout ends as rolled_back.",
    input: { rollout: rolloutRef, reason, project_id: projectIdArg },
    annotations: DESTRUCTIVE,
    async run({ rollout, reason, project_id }, open) {
      return dataOf(rollouts(open, project_id)({ id: seg(rollout) }).rollback.post(reason ? { reason } : {}));
    },
  }),
];
