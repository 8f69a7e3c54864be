import type { Migration } from "./db";
import { tenancyMigration } from "../modules/projects/schema";
import { sdkKeysMigration } from "../modules/keys/schema";
import { revisionsMigration } from "../modules/delivery/schema";
import { killswitchesMigration } from "../modules/killswitches/schema";
import { configsMigration } from "../modules/configs/schema";
import { identityMigration } from "../modules/identity/schema";
import { deviceMigration } from "../modules/device/schema";
import { apiTokensMigration } from "../modules/tokens/schema";

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
];
