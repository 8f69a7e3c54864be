import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ENVS, type SvcClient } from "../cli/client";

/** Opens a session for one tool call, with the project the call names (if any). */
export type OpenSession = (projectId?: string) => SvcClient;

/**
 * One MCP tool. `run` gets the validated arguments and a way to open the
 * user's session (credentials are re-read per call, so `svc login` after
 * the tool server started takes effect). What it returns is sent as JSON.
 */
export type McpTool<S extends z.ZodRawShape = z.ZodRawShape> = {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  run(args: z.infer<z.ZodObject<S>>, open: OpenSession): Promise<unknown>;
};

/** Keeps the argument types of one tool while the registry holds them all as `McpTool`. */
export function defineTool<S extends z.ZodRawShape>(tool: McpTool<S>): McpTool {
  return tool as unknown as McpTool;
}

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** The optional argument of every project-scoped tool. */
export const projectIdArg = z.string().min(1).max(128).optional().describe("Project to act on; default: the active project (see whoami)");
export const envArg = z.enum(ENVS);
