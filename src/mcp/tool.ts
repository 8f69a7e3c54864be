import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ENVS } from "../lib/envs";
import type { McpTool } from "../lib/mcp-tool";

export type { McpTool, OpenSession } from "../lib/mcp-tool";

/** Keeps the argument types of one tool while the registry holds them all as `McpTool`. */
export function defineTool<S extends z.ZodRawShape>(tool: McpTool<S>): McpTool {
  return tool as unknown as McpTool;
}

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** Annotations of a tool that changes something and cannot be undone by repeating it. */
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/** The optional argument of every project-scoped tool. */
export const projectIdArg = z.string().min(1).max(128).optional().describe("Project to act on; default: the active project (see whoami)");
export const envArg = z.enum(ENVS);
