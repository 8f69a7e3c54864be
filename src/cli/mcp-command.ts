import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createMcpServer } from "../mcp/server";
import type { identityRoutes } from "../modules/identity/routes";
import { SvcClient, credentialsPath, dataOf } from "./client";
import type { Command } from "./command";

export const mcpCommand: Command = {
  name: "mcp",
  summary: "Serve the MCP tools (killswitches, configs, gates, events, metrics, errors, alert rules, SDK keys, members, projects) on stdio for AI assistants",
  details: [
    "Speaks the Model Context Protocol on stdin/stdout with the credentials of `svc login` (or SERVICE_CLI_TOKEN); it starts even when not signed in, and every tool then says how to sign in. Set HOME or SERVICE_CONFIG_DIR when the assistant starts it from elsewhere.",
    "At start it asks the server what the credential may do in the active project (GET /api/admin/me): a read-only API token or a viewer gets only the tools that read, and so does a start that cannot tell (not signed in, server unreachable); restart it after `svc login` for the others.",
    "Answers that carry text from outside the organisation (queue items, tracked errors, connector deliveries, the event catalog, the audit trail) come back wrapped as untrusted data under a notice, in the text and the structured content.",
  ],
  examples: ["svc mcp", "claude mcp add svc -- svc mcp"],
  flags: {
    url: { type: "string", value: "URL", help: "Server the tools call (default: SERVICE_URL, else the server you signed in to)" },
    project: { type: "string", value: "ID", help: "Project the tools act on when a call names none (default: .service, else the project chosen at login)" },
  },
  async run({ values }) {
    // stdout carries only protocol messages; anything a dependency logs goes to stderr.
    console.log = console.error;
    const url = values.url as string | undefined;
    const flagProject = values.project as string | undefined;
    const open = (projectId?: string) => SvcClient.open({ url, project: projectId ?? flagProject });
    const readOnly = await isReadOnly(open);
    const server = createMcpServer(open, { readOnly });
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
      process.stdin.once("end", resolve);
    });
    await server.connect(transport);
    console.error(`svc mcp: serving on stdio (credentials: ${process.env.SERVICE_CLI_TOKEN ? "SERVICE_CLI_TOKEN" : credentialsPath()}${readOnly ? "; read-only: only tools that read" : ""})`);
    await closed;
    await server.close();
    return 0;
  },
};

/**
 * Whether the credential may only read in the active project. Whatever
 * cannot be told (not signed in, server unreachable, refused) counts as
 * read-only: the tools that change things are offered only to a credential
 * the server said may write.
 */
async function isReadOnly(open: (projectId?: string) => SvcClient): Promise<boolean> {
  try {
    const me = await dataOf(open().api<ReturnType<typeof identityRoutes>>().api.admin.me.get());
    return me.credential?.readOnly !== false;
  } catch (err) {
    // Tools answer with this error until the user signs in; the server still starts so the assistant can say why.
    console.error(`svc mcp: ${(err as Error).message}`);
    return true;
  }
}
