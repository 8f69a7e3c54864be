import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { metricRoutes } from "./routes";

/** The metric routes, typed from their own schemas. */
const metrics = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof metricRoutes>>().api.admin.metrics;
const metricName = z.string().min(1).max(128).describe("Metric name, id or unique id prefix");
const epochSeconds = z.number().int().min(0);

export const metricTools = [
  defineTool({
    name: "list_metrics",
    title: "List metrics",
    description:
      "The project's metrics: each a count of a catalogued event, a sum of one of its numeric properties (or of the event's value), distinct units, or a ratio of two of those, with optional property filters.",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name/description") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      return dataOf(metrics(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "get_metric",
    title: "Get a metric",
    description: "One metric's definition: kind (count, sum, unique, ratio), event, summed property, filters, or a ratio's numerator and denominator.",
    input: { name: metricName, project_id: projectIdArg },
    annotations: READ_ONLY,
    async run({ name, project_id }, open) {
      return dataOf(metrics(open, project_id)({ id: seg(name) }).get());
    },
  }),
  defineTool({
    name: "metric_series",
    title: "A metric's time series",
    description:
      "The metric's values in buckets of `bucket` seconds from `from` (inclusive) to `to` (exclusive), epoch seconds; at most 10,000 buckets. Answers {sql, rows: [{t, v}]} with every bucket (empty ones 0). An error saying the metric cannot be compiled means an event or property it names left the catalog: the metric must be re-saved.",
    input: {
      name: metricName,
      from: epochSeconds.describe("Epoch seconds, inclusive"),
      to: epochSeconds.describe("Epoch seconds, exclusive; greater than from"),
      bucket: z.number().int().min(1).describe("Bucket width in seconds, e.g. 3600 for hourly"),
      project_id: projectIdArg,
    },
    annotations: READ_ONLY,
    async run({ name, from, to, bucket, project_id }, open) {
      return dataOf(metrics(open, project_id)({ id: seg(name) }).series.post({ from, to, bucket }));
    },
  }),
];
