import { apiOf } from "../../../web/dashboard/api";
import type { usageRoutes } from "../routes";

export const usageApi = apiOf<ReturnType<typeof usageRoutes>>();
export { ENVS, type Env } from "../../../lib/envs";

/** Each reason in words, as the stale list and the CLI say it. */
export const REASON_WORDS = { one_value: "One value for everyone", not_evaluated: "Not evaluated" } as const;
