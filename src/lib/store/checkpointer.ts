import type { Database } from "bun:sqlite";

/**
 * WAL checkpoints off the server's thread.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold (1,000 pages by default), on the connection that commits: it
 * copies the WAL back into the database file and syncs both, and on a busy
 * server that is the event loop stalled for milliseconds on fsync every few
 * hundred writes (a third of the public intake's time, measured). Here the
 * writer's automatic checkpoint is off and a worker thread with its own
 * connection runs `PRAGMA wal_checkpoint(PASSIVE)` every `everyMs`: the same
 * checkpoint SQLite would run (PASSIVE never waits for readers or writers,
 * so nothing on the server's thread waits for it either), and the same
 * durability (synchronous=NORMAL: a commit is on disk at the next
 * checkpoint or WAL sync; NOTES.md).
 *
 * If the worker cannot start or fails, the writer gets its automatic
 * checkpoint back, so the WAL never grows without bound.
 */
const CHECKPOINT_WORKER = `
const { Database } = require("bun:sqlite");
let db, timer;
function checkpoint() {
  try {
    const r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (r.log > 0) postMessage({ log: r.log, checkpointed: r.checkpointed, busy: r.busy });
  } catch (err) {
    // Another connection mid-checkpoint (SQLITE_BUSY) is a normal turn: the next one catches up.
    if (!String(err && err.code).startsWith("SQLITE_BUSY")) postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
}
self.onmessage = ({ data }) => {
  if (data.start) {
    try {
      db = new Database(data.path, { create: false });
      db.run("PRAGMA busy_timeout = 0");
      timer = setInterval(checkpoint, data.everyMs);
      postMessage({ ready: true });
    } catch (err) {
      postMessage({ error: err instanceof Error ? err.message : String(err) });
    }
  } else if (data.close) {
    clearInterval(timer);
    try { db && db.close(); } catch {}
    postMessage({ closed: true });
  }
};
`;

/** SQLite's default automatic checkpoint threshold, restored when the worker fails. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export type CheckpointTurn = { log: number; checkpointed: number; busy: number };

let workerUrl: string | undefined;

export class WalCheckpointer {
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;
  /** The latest turn that found frames in the WAL (tests and diagnostics). */
  lastTurn: CheckpointTurn | undefined;
  /** Turns that found frames to copy. */
  turns = 0;

  /**
   * `writer` is the connection whose automatic checkpoint this replaces; `restoredPages` is its threshold should
   * the worker fail (the event store runs with a larger one than SQLite's default).
   */
  constructor(
    private readonly path: string,
    private readonly writer: Database,
    private readonly options: { everyMs?: number; restoredPages?: number; onError?: (message: string) => void } = {},
  ) {}

  /** Starts the worker; resolves once it runs (the writer's own checkpoint stays on until then). */
  start(): Promise<void> {
    workerUrl ??= URL.createObjectURL(new Blob([CHECKPOINT_WORKER], { type: "application/javascript" }));
    const worker = new Worker(workerUrl);
    (worker as Worker & { unref?: () => void }).unref?.();
    this.worker = worker;
    return new Promise<void>((ready) => {
      worker.onmessage = ({ data }: MessageEvent<{ ready?: true; closed?: true; error?: string } & Partial<CheckpointTurn>>) => {
        if (data.ready) {
          this.writer.run("PRAGMA wal_autocheckpoint = 0");
          ready();
        } else if (data.error !== undefined) {
          this.fallBack(data.error);
          ready();
        } else if (data.log !== undefined) {
          this.turns++;
          this.lastTurn = { log: data.log, checkpointed: data.checkpointed ?? 0, busy: data.busy ?? 0 };
        }
      };
      worker.onerror = (event) => {
        this.fallBack(event.message);
        ready();
      };
      worker.postMessage({ start: true, path: this.path, everyMs: this.options.everyMs ?? 1000 });
    });
  }

  /** The writer checkpoints for itself again. */
  private fallBack(message: string): void {
    this.options.onError?.(message);
    try {
      this.writer.run(`PRAGMA wal_autocheckpoint = ${this.options.restoredPages ?? DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The writer is closed: nothing left to checkpoint for.
    }
    this.worker?.terminate();
    this.worker = undefined;
  }

  /** Closes the worker's connection before the writer's (the last connection to close folds the WAL in). */
  stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    this.closing ??= new Promise<void>((done) => {
      const timer = setTimeout(done, 2000);
      worker.onmessage = ({ data }: MessageEvent<{ closed?: true }>) => {
        if (!data.closed) return;
        clearTimeout(timer);
        done();
      };
      worker.postMessage({ close: true });
    }).finally(() => {
      worker.terminate();
      this.worker = undefined;
    });
    return this.closing;
  }
}
