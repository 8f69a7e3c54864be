import type { McpTool } from "../tool";
import { configTools } from "./configs";
import { keyTools } from "./keys";
import { killswitchTools } from "./killswitches";
import { projectTools } from "./projects";

/** Every tool `svc mcp` serves. A module adds its tools as one file here and one entry below. */
export const TOOLS: McpTool[] = [...projectTools, ...killswitchTools, ...configTools, ...keyTools];
