import { apiOf } from "../../../web/dashboard/api";
import type { configRoutes } from "../routes";

export const configApi = apiOf<ReturnType<typeof configRoutes>>();
export { ENVS, type Env } from "../../../lib/envs";
