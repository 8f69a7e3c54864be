import { apiOf } from "../../../web/dashboard/api";
import type { configRoutes } from "../routes";

export const configApi = apiOf<ReturnType<typeof configRoutes>>();
export const ENVS = ["dev", "staging", "prod"] as const;
export type Env = (typeof ENVS)[number];
