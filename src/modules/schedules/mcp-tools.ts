import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { DESTRUCTIVE, READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { scheduleRoutes } from "./routes";
import { STATES, STEPS_MAX } from "./types";

/** The schedule routes, typed from their own schemas. */
const schedules = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof scheduleRoutes>>().api.admin.schedules;

const change = z
  .object({ kind: z.enum(["killswitch.set", "config.publish", "gate.rules", "segment.update"]) })
  .passthrough()
  .describe(
    "The change, flat: killswitch.set {name, env, value, switchKey?}; config.publish {name, env, value, rules?}; gate.rules {name, env, rules: [{conditions, passPercentage}]}; segment.update {name, patch}",
  );
const runAt = z.string().min(1).max(64).describe("ISO 8601 time with its zone, e.g. 2026-12-01T09:00:00Z; not in the past");

export const scheduleTools = [
  defineTool({
    name: "list_schedules",
    title: "List scheduled changes",
    description:
      "The project's scheduled changes, newest first. Each has steps (one change, or a ramp such as a gate at 5 %, 25 %, 100 %), each with runAt, state (pending, done, failed with its error, cancelled), ranAt and, when it ran after downtime, late: true with lateByMs.",
    input: {
      project_id: projectIdArg,
      q: z.string().max(100).optional().describe("Substring of the id, summary or author"),
      state: z.enum(STATES).optional(),
    },
    annotations: READ_ONLY,
    async run({ project_id, q, state }, open) {
      return dataOf(schedules(open, project_id).get({ query: { q: q || undefined, state } }));
    },
  }),
  defineTool({
    name: "create_schedule",
    title: "Schedule a change or a ramp",
    description:
      "Schedules one change at runAt, or a ramp of steps (each {change, run_at}, in time order). The change is checked now, exactly as its module would check it; it runs once across all servers at its time, as you.",
    input: {
      change: change.optional(),
      run_at: runAt.optional(),
      steps: z.array(z.object({ change, run_at: runAt })).min(1).max(STEPS_MAX).optional().describe("A ramp; not with change and run_at"),
      project_id: projectIdArg,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run({ change, run_at, steps, project_id }, open) {
      const body = steps ? { steps: steps.map((s) => ({ change: s.change, runAt: s.run_at })) } : { change, runAt: run_at };
      return dataOf(schedules(open, project_id).post(body as never));
    },
  }),
  defineTool({
    name: "cancel_schedule",
    title: "Cancel a schedule",
    description: "Cancels the schedule's pending steps; steps that already ran stay as they are.",
    input: { schedule: z.string().min(1).max(128).describe("Schedule id (sch_…) or a unique prefix"), project_id: projectIdArg },
    annotations: DESTRUCTIVE,
    async run({ schedule, project_id }, open) {
      return dataOf(schedules(open, project_id)({ id: seg(schedule) }).delete());
    },
  }),
];
