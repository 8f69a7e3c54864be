import type { ModuleManifest } from "../lib/module";
import type { ModuleMigrations } from "../lib/store";
import { AUDIT_MIGRATIONS } from "../lib/audit";
import { OUTBOX_MIGRATIONS } from "../lib/outbox";
import { REVISIONS_MIGRATIONS } from "../lib/revisions";
import { alertsModule } from "./alerts/manifest";
import { analyticsModule } from "./analytics/manifest";
import { attributesModule } from "./attributes/manifest";
import { auditModule } from "./audit/manifest";
import { configsModule } from "./configs/manifest";
import { connectorsModule } from "./connectors/manifest";
import { dashboardModule } from "./dashboard/manifest";
import { definitionsModule } from "./definitions/manifest";
import { deliveryModule } from "./delivery/manifest";
import { deviceModule } from "./device/manifest";
import { errorsModule } from "./errors/manifest";
import { eventsModule } from "./events/manifest";
import { experimentsModule } from "./experiments/manifest";
import { gatesModule } from "./gates/manifest";
import { growthbookModule } from "./growthbook/manifest";
import { i18nModule } from "./i18n/manifest";
import { identityModule } from "./identity/manifest";
import { keysModule } from "./keys/manifest";
import { killswitchesModule } from "./killswitches/manifest";
import { metricsModule } from "./metrics/manifest";
import { opsModule } from "./ops/manifest";
import { operationsModule } from "./operations/manifest";
import { projectsModule } from "./projects/manifest";
import { refsModule } from "./refs/manifest";
import { relaysModule } from "./relays/manifest";
import { rolloutsModule } from "./rollouts/manifest";
import { requestsModule } from "./requests/manifest";
import { schedulesModule } from "./schedules/manifest";
import { segmentsModule } from "./segments/manifest";
import { sdkPackageModule } from "./sdk-package/manifest";
import { tokensModule } from "./tokens/manifest";
import { universesModule } from "./universes/manifest";
import { usageModule } from "./usage/manifest";

/**
 * Every module, in dependency order: a module's tables may reference an
 * earlier module's, and its service may use an earlier module's at start.
 * Adding a module is one folder with a manifest.ts and one line here.
 */
export const MODULES: ModuleManifest[] = [
  projectsModule,
  keysModule,
  killswitchesModule,
  configsModule,
  attributesModule,
  segmentsModule,
  gatesModule,
  eventsModule,
  analyticsModule,
  errorsModule,
  metricsModule,
  alertsModule,
  universesModule,
  experimentsModule,
  rolloutsModule,
  definitionsModule,
  schedulesModule,
  refsModule,
  requestsModule,
  connectorsModule,
  i18nModule,
  opsModule,
  deliveryModule,
  growthbookModule,
  // After delivery: its stream and key routes record the relays that call them.
  relaysModule,
  // After delivery and the flags' modules: it reads their snapshots and lists; closed before them, it writes its last counts.
  usageModule,
  identityModule,
  deviceModule,
  tokensModule,
  auditModule,
  dashboardModule,
  sdkPackageModule,
  // After the dashboard: GET /metrics is also its Metrics section, and the route registered last answers (browsers get the page).
  operationsModule,
] as ModuleManifest[];

/**
 * Every schema step, per module, in the order they are applied. The shared
 * tables of src/lib (revisions, audit) come right after projects, which
 * they reference.
 */
export function storeMigrations(): ModuleMigrations[] {
  const list: ModuleMigrations[] = [];
  for (const m of MODULES) {
    list.push({ module: m.name, migrations: m.migrations });
    if (m.name === "projects") {
      list.push({ module: "revisions", migrations: REVISIONS_MIGRATIONS });
      list.push({ module: "audit", migrations: AUDIT_MIGRATIONS });
      list.push({ module: "outbox", migrations: OUTBOX_MIGRATIONS });
    }
  }
  return list.filter((m) => m.migrations.length > 0);
}
