import { z } from "zod";
import { dataOf, seg } from "../../cli/client";
import type { OpenSession } from "../../lib/mcp-tool";
import { READ_ONLY, defineTool, projectIdArg } from "../../mcp/tool";
import type { connectorRoutes } from "./routes";

/** The connector routes, typed from their own schemas. */
const connectors = (open: OpenSession, projectId?: string) => open(projectId).api<ReturnType<typeof connectorRoutes>>().api.admin.connectors;

export const connectorTools = [
  defineTool({
    name: "list_connectors",
    title: "List connectors",
    description:
      "The project's connectors: where its events go (slack, linear, google_sheets through OAuth; claude, cursor, github and jules triggers; signed webhooks), with the event types each hears, its config, whether it is enabled, and which credential fields are stored (never their values).",
    input: { project_id: projectIdArg, q: z.string().max(100).optional().describe("Case-insensitive substring filter on name and provider") },
    annotations: READ_ONLY,
    async run({ project_id, q }, open) {
      // An empty q is left out, as before.
      return dataOf(connectors(open, project_id).get({ query: { q: q || undefined } }));
    },
  }),
  defineTool({
    name: "list_connector_deliveries",
    title: "List a connector's deliveries",
    description:
      "A connector's delivery log, newest first: each event sent (or being retried) with its status (pending, delivered, failed), attempts, the vendor's last HTTP status and error, the event payload and every attempt.",
    input: {
      id: z.string().min(1).max(128).describe("Connector id (UUID)"),
      status: z.enum(["pending", "delivered", "failed"]).optional().describe("Only deliveries in this state"),
      limit: z.number().int().min(1).max(100).optional().describe("How many (default 20)"),
      project_id: projectIdArg,
    },
    annotations: READ_ONLY,
    untrusted: "the vendors' answers and errors, and event payloads that may carry public intake text",
    async run({ id, status, limit, project_id }, open) {
      // The limit goes as the text the query takes.
      return dataOf(connectors(open, project_id)({ id: seg(id) }).deliveries.get({ query: { status, limit: limit?.toString() } }));
    },
  }),
];
