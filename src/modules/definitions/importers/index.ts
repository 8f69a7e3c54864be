import type { ImportOptions, ImportResult, Tool } from "./common";
import { fromFlagsmith } from "./flagsmith";
import { fromGrowthBook } from "./growthbook";
import { fromLaunchDarkly } from "./launchdarkly";
import { fromUnleash } from "./unleash";

export { TOOLS, TOOL_NAMES, type ImportOptions, type ImportResult, type Rebucketed, type Tool, type Unmapped } from "./common";
export { fromFlagsmith, fromGrowthBook, fromLaunchDarkly, fromUnleash };

/** Each tool's mapper: a parsed export in, a definitions document with what it left out and what re-buckets. */
export const IMPORTERS: Record<Tool, (raw: unknown, options?: ImportOptions) => ImportResult> = {
  unleash: fromUnleash,
  growthbook: fromGrowthBook,
  launchdarkly: fromLaunchDarkly,
  flagsmith: fromFlagsmith,
};
