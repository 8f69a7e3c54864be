import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ApiRequestError } from "../cli/client";
import { VERSION } from "../version";
import type { McpTool, OpenSession } from "../lib/mcp-tool";
import { MODULES } from "../modules/index";

function errorText(err: unknown): string {
  if (err instanceof ApiRequestError) return `${err.message} (${err.code}, HTTP ${err.status})${err.detail ? `: ${err.detail}` : ""}`;
  return (err as Error)?.message ?? String(err);
}

/** Every module's tools, in manifest order. */
export function mcpTools(): McpTool[] {
  return MODULES.flatMap((m) => [...(m.mcpTools ?? [])]);
}

/** The MCP server with every registered tool; failures become tool errors the model can read, never crashes. */
export function createMcpServer(open: OpenSession): McpServer {
  const server = new McpServer(
    { name: "svc", title: "svc feature flags and configs", version: VERSION },
    { instructions: "Tools for the svc feature-flag service: killswitches, dynamic configs, SDK keys, API tokens, members and projects of the signed-in user. list_configs and list_killswitches find names; get_config reads one config." },
  );
  for (const tool of mcpTools()) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: tool.input, annotations: { title: tool.title, ...tool.annotations } },
      (async (args: never): Promise<CallToolResult> => {
        try {
          const result = await tool.run(args, open);
          return { content: [{ type: "text", text: JSON.stringify(result ?? null, null, 2) }] };
        } catch (err) {
          return { isError: true, content: [{ type: "text", text: errorText(err) }] };
        }
      }) as never,
    );
  }
  return server;
}
