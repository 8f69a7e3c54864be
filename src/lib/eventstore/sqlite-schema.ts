import type { Database } from "bun:sqlite";

/** The tables of events.db and their indexes (see SqliteEventStore in sqlite.ts for why each is shaped so). */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (project_id TEXT NOT NULL, name TEXT NOT NULL, hour INTEGER NOT NULL, ts INTEGER NOT NULL, unit_id TEXT, value REAL, props TEXT) STRICT;
CREATE INDEX IF NOT EXISTS events_by_name_hour ON events (project_id, name, hour);
CREATE TABLE IF NOT EXISTS event_hourly (project_id TEXT NOT NULL, name TEXT NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, total REAL NOT NULL, PRIMARY KEY (project_id, name, hour)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS event_units_daily (project_id TEXT NOT NULL, name TEXT NOT NULL, day INTEGER NOT NULL, unit_id TEXT NOT NULL, PRIMARY KEY (project_id, name, day, unit_id)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS experiment_exposures (project_id TEXT NOT NULL, experiment_id TEXT NOT NULL, unit_id TEXT NOT NULL, variant TEXT NOT NULL, first_ts INTEGER NOT NULL, PRIMARY KEY (project_id, experiment_id, unit_id)) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS experiment_exposures_by_variant ON experiment_exposures (project_id, experiment_id, variant, first_ts);
CREATE INDEX IF NOT EXISTS experiment_exposures_by_unit ON experiment_exposures (project_id, unit_id, experiment_id, first_ts, variant);
`;

/**
 * Units per experiment and variant, kept by triggers on `experiment_exposures` (a first exposure that moves to
 * another variant moves its count; pruned exposures leave it): the rollout monitor counts each rollout's groups
 * every minute, and walking the variant index for that cost about a third of its round (sqlite-many.ts).
 */
const EXPOSURE_COUNTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS experiment_exposure_counts (project_id TEXT NOT NULL, experiment_id TEXT NOT NULL, variant TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (project_id, experiment_id, variant)) STRICT, WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS experiment_exposures_counted_insert AFTER INSERT ON experiment_exposures BEGIN
  INSERT INTO experiment_exposure_counts (project_id, experiment_id, variant, n) VALUES (NEW.project_id, NEW.experiment_id, NEW.variant, 1)
    ON CONFLICT (project_id, experiment_id, variant) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS experiment_exposures_counted_update AFTER UPDATE OF variant ON experiment_exposures WHEN OLD.variant IS NOT NEW.variant BEGIN
  UPDATE experiment_exposure_counts SET n = n - 1 WHERE project_id = OLD.project_id AND experiment_id = OLD.experiment_id AND variant = OLD.variant;
  INSERT INTO experiment_exposure_counts (project_id, experiment_id, variant, n) VALUES (NEW.project_id, NEW.experiment_id, NEW.variant, 1)
    ON CONFLICT (project_id, experiment_id, variant) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS experiment_exposures_counted_delete AFTER DELETE ON experiment_exposures BEGIN
  UPDATE experiment_exposure_counts SET n = n - 1 WHERE project_id = OLD.project_id AND experiment_id = OLD.experiment_id AND variant = OLD.variant;
END;
`;

/** The counts and their triggers; a file made before them gets them, its counts taken in the same transaction. */
export function ensureExposureCounts(db: Database): void {
  const present = () => db.query("SELECT 1 AS yes FROM sqlite_master WHERE type = 'trigger' AND name = 'experiment_exposures_counted_delete'").get() !== null;
  if (present()) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    if (!present()) {
      db.exec(EXPOSURE_COUNTS_SCHEMA);
      db.exec("DELETE FROM experiment_exposure_counts");
      db.exec(
        "INSERT INTO experiment_exposure_counts (project_id, experiment_id, variant, n) SELECT project_id, experiment_id, variant, COUNT(*) FROM experiment_exposures GROUP BY project_id, experiment_id, variant",
      );
    }
    db.exec("COMMIT");
  } catch (err) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw err;
  }
}

