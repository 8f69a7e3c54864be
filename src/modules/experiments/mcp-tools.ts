import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { experimentRoutes } from "./routes";

/** The experiment routes, typed from their own schemas. */
const experiments = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof experimentRoutes>>().api.admin.experiments;
const experimentName = z.string().min(1).max(128).describe("Experiment name, id or unique id prefix");

export const experimentTools = [
  defineTool({
    name: "list_experiments",
    title: "List experiments",
    description:
      "The project's experiments: each splits the units of an allocation ([start, end) of its universe's 10,000 segments) over its variants by weight (the first variant is the control), measured by a primary metric and guardrail metrics. status: draft (not published), running (in its env's snapshot: SDKs assign units and log exposures), stopped (outcome: ship a variant or rollback).",
    input: {
      project_id: projectIdArg,
      q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description"),
      status: z.enum(["draft", "running", "stopped"]).optional().describe("Only experiments in this state"),
    },
    annotations: READ_ONLY,
    async run({ project_id, q, status }, open) {
      return dataOf(experiments(open, project_id).get({ query: { q: q || undefined, status } }));
    },
  }),
  defineTool({
    name: "get_experiment",
    title: "Get an experiment",
    description:
      "One experiment: universe, env, status, variants (key, weight, value, optional config or gate override), allocation ([start, end) in segments), targeting gate, primaryMetric and guardrailMetrics (metric ids; worseWhen is the harmful move), startedAt, stoppedAt and outcome.",
    input: { name: experimentName, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return dataOf(experiments(open, project_id)({ id: seg(name) }).get());
    },
  }),
  defineTool({
    name: "experiment_results",
    title: "An experiment's results",
    description:
      "The analysis, read with the project's analysis settings (method, significance threshold alpha, minimum sample days). exposures: units per variant; srm: the sample-ratio-mismatch check, and when srm.flagged is true assignment or logging is broken and no result may be trusted. " +
      "metrics: per metric (primary, guardrails) and per treatment against the control: frequentist (absolute and relative effect with ci and pValue), sequential (always-valid pValue, safe under peeking; every read of the results counts as a look, and the pValue shown is the smallest over the looks so far), bayesian (chanceToBeatControl, credible intervals), and verdict (increase, decrease or inconclusive, as the project's method reads it; harm: true for a guardrail that moved the harmful way). " +
      "warnings lists problems worth a look. A draft has no results yet.",
    input: { name: experimentName, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return dataOf(experiments(open, project_id)({ id: seg(name) }).results.get());
    },
  }),
];
