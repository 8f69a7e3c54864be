import type { DashboardModule } from "./registry";
import { homeModuleOf } from "./home";
import { alertsDashboard } from "../../modules/alerts/dashboard/pages";
import { attributesDashboard } from "../../modules/attributes/dashboard/pages";
import { auditDashboard } from "../../modules/audit/dashboard/pages";
import { configsDashboard } from "../../modules/configs/dashboard/pages";
import { connectorsDashboard } from "../../modules/connectors/dashboard/pages";
import { errorsDashboard } from "../../modules/errors/dashboard/pages";
import { eventsDashboard } from "../../modules/events/dashboard/pages";
import { metricsDashboard } from "../../modules/metrics/dashboard/pages";
import { gatesDashboard } from "../../modules/gates/dashboard/pages";
import { identityDashboard } from "../../modules/identity/dashboard/pages";
import { keysDashboard } from "../../modules/keys/dashboard/pages";
import { killswitchesDashboard } from "../../modules/killswitches/dashboard/pages";
import { projectsDashboard } from "../../modules/projects/dashboard/pages";
import { tokensDashboard } from "../../modules/tokens/dashboard/pages";
import { universesDashboard } from "../../modules/universes/dashboard/pages";
import { experimentsDashboard } from "../../modules/experiments/dashboard/pages";
import { rolloutsDashboard } from "../../modules/rollouts/dashboard/pages";
import { segmentsDashboard } from "../../modules/segments/dashboard/pages";
import { requestsDashboard } from "../../modules/requests/dashboard/pages";
import { schedulesDashboard } from "../../modules/schedules/dashboard/pages";
import { opsDashboard } from "../../modules/ops/dashboard/pages";
import { i18nDashboard } from "../../modules/i18n/dashboard/pages";
import { usageDashboard } from "../../modules/usage/dashboard/pages";
import { definitionsDashboard } from "../../modules/definitions/dashboard/pages";
import { growthbookDashboard } from "../../modules/growthbook/dashboard/pages";
import { relaysDashboard } from "../../modules/relays/dashboard/pages";
import { sdkPackageDashboard } from "../../modules/sdk-package/dashboard/pages";

/**
 * Every module's pages. A module adds its folder's export here (and its
 * section to sections.ts) in the change that adds it; the navigation
 * orders pages by their own `nav.order`.
 */
export const DASHBOARD_MODULES: DashboardModule[] = [homeModuleOf(() => DASHBOARD_MODULES), killswitchesDashboard, gatesDashboard, segmentsDashboard, attributesDashboard, eventsDashboard, metricsDashboard, opsDashboard, errorsDashboard, alertsDashboard, universesDashboard, experimentsDashboard, rolloutsDashboard, schedulesDashboard, requestsDashboard, usageDashboard, connectorsDashboard, i18nDashboard, configsDashboard, keysDashboard, sdkPackageDashboard, growthbookDashboard, relaysDashboard, tokensDashboard, definitionsDashboard, identityDashboard, projectsDashboard, auditDashboard];
