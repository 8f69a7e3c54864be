import type { DashboardModule } from "./registry";
import { homeModule } from "./home";
import { configsDashboard } from "../../modules/configs/dashboard/pages";
import { killswitchesDashboard } from "../../modules/killswitches/dashboard/pages";

/**
 * Every module's pages, in navigation order. A module adds its folder's
 * export here (and its section to sections.ts) in the change that adds it.
 */
export const DASHBOARD_MODULES: DashboardModule[] = [homeModule, killswitchesDashboard, configsDashboard];
