import type { Migration } from "./db";
import { rolesMigration, tenancyMigration } from "../modules/projects/schema";
import { sdkKeysMigration } from "../modules/keys/schema";
import { revisionsMigration } from "../modules/delivery/schema";
import { killswitchesMigration } from "../modules/killswitches/schema";
import { configChangeSeqMigration, configsMigration } from "../modules/configs/schema";
import { identityMigration, oidcIdentitiesMigration } from "../modules/identity/schema";
import { deviceExpiryMigration, deviceMigration } from "../modules/device/schema";
import { apiTokensMigration } from "../modules/tokens/schema";
import { storeMetaMigration } from "./store-meta";

/**
 * Every schema step in the order it was released. Append only: a step's
 * position is its `user_version`, so never reorder or edit a released step.
 * Each module owns the SQL of its own tables.
 */
export const MIGRATIONS: Migration[] = [
  tenancyMigration,
  sdkKeysMigration,
  revisionsMigration,
  killswitchesMigration,
  configsMigration,
  identityMigration,
  deviceMigration,
  apiTokensMigration,
  rolesMigration,
  storeMetaMigration,
  oidcIdentitiesMigration,
  deviceExpiryMigration,
  configChangeSeqMigration,
];
