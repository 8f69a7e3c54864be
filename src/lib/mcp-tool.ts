import type { Treaty } from "@elysiajs/eden";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { Elysia } from "elysia";
import type { z } from "zod";

/**
 * What a tool call talks to the server through: the signed-in user's
 * session (src/cli/client.ts's SvcClient is one). Declared here so that a
 * module's manifest can carry its tools without src/lib importing the CLI.
 */
export interface McpSession {
  request<T = unknown>(method: string, path: string, options?: McpRequestOptions): Promise<T>;
  /** A client typed from one module's routes (see SvcClient.api): what tools call, so the routes' types check them. */
  // biome-ignore lint: any Elysia app type
  api<App extends Elysia<any, any, any, any, any, any, any>>(options?: Omit<McpRequestOptions, "body">): Treaty.Create<App>;
  readonly serverUrl: string;
  /** Where the active project came from (argument, .service file, login, the credential's own). */
  readonly projectSource: string;
  readonly credentialSource: string;
}

export type McpRequestOptions = {
  body?: unknown;
  /** The operation requires X-Project-Id: fall back to the credential's own project when none is selected. */
  requireProject?: boolean;
  /** Send no X-Project-Id whatever is selected. */
  withoutProject?: boolean;
};

/** Opens a session for one tool call, with the project the call names (if any). */
export type OpenSession = (projectId?: string) => McpSession;

/**
 * One MCP tool, served by `svc mcp`. `run` gets the validated arguments and a
 * way to open the user's session (credentials are re-read per call, so
 * `svc login` after the tool server started takes effect). What it returns
 * is sent as JSON. A module lists its tools in its manifest (`mcpTools`).
 */
export type McpTool<S extends z.ZodRawShape = z.ZodRawShape> = {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  /**
   * Set when the answer carries text that people outside the organisation
   * wrote (public intake items, SDK error messages, vendors' answers): what
   * that text is. The tool server then hands the answer back labelled as
   * untrusted data, never as instructions.
   */
  untrusted?: string;
  run(args: z.infer<z.ZodObject<S>>, open: OpenSession): Promise<unknown>;
};
