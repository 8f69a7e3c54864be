import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";

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
// One thread for every database file of the process (service.db, events.db): a connection and a timer each.
const files = new Map();
function checkpoint(id) {
  const f = files.get(id);
  if (!f) return;
  try {
    const r = f.db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    if (r.log > 0) postMessage({ id, log: r.log, checkpointed: r.checkpointed, busy: r.busy });
    // Nothing written since the last turn and everything folded in: one quiet turn more.
    f.quiet = r.busy === 0 && r.checkpointed === r.log && r.log === f.lastLog ? f.quiet + 1 : 0;
    f.lastLog = r.log;
    if (f.quiet >= f.idleTurns) {
      // Quiet long enough: the WAL is emptied (without waiting: busy means someone writes, and the next turn sees it)
      // and this file is handed back to its writer, which stops the thread when it served no other file.
      const t = f.db.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
      if (t.busy === 0) {
        clearInterval(f.timer);
        postMessage({ id, idle: true });
      }
    }
  } catch (err) {
    // Another connection mid-checkpoint (SQLITE_BUSY) is a normal turn: the next one catches up.
    if (!String(err && err.code).startsWith("SQLITE_BUSY")) postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
}
self.onmessage = ({ data }) => {
  const id = data.id;
  if (data.start) {
    try {
      const db = new Database(data.path, { create: false });
      db.run("PRAGMA busy_timeout = 0");
      files.set(id, { db, timer: setInterval(() => checkpoint(id), data.everyMs), idleTurns: data.idleTurns, quiet: 0, lastLog: -1 });
      postMessage({ id, ready: true });
    } catch (err) {
      postMessage({ id, error: err instanceof Error ? err.message : String(err) });
    }
  } else if (data.close) {
    const f = files.get(id);
    files.delete(id);
    if (f) {
      clearInterval(f.timer);
      try { f.db.close(); } catch {}
    }
    postMessage({ id, closed: true });
  }
};
`;

/** SQLite's default automatic checkpoint threshold, restored when the worker fails. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export type CheckpointTurn = { log: number; checkpointed: number; busy: number };

type Reply = { id: number; ready?: true; closed?: true; idle?: true; error?: string } & Partial<CheckpointTurn>;

/**
 * The one checkpoint thread of the process, shared by every WalCheckpointer: a worker thread is a whole
 * JavaScript VM (about 7 MB resident for the first, measured on the compiled binary), and the server has two
 * SQLite files. Started with the first checkpointer, ended with the last.
 */
const thread = {
  worker: undefined as Worker | undefined,
  url: undefined as string | undefined,
  nextId: 1,
  users: new Map<number, (reply: Reply) => void>(),

  join(onReply: (reply: Reply) => void): { id: number; worker: Worker } {
    if (!this.worker) {
      this.url ??= URL.createObjectURL(new Blob([CHECKPOINT_WORKER], { type: "application/javascript" }));
      const worker = new Worker(this.url);
      (worker as Worker & { unref?: () => void }).unref?.();
      worker.onmessage = ({ data }: MessageEvent<Reply>) => this.users.get(data.id)?.(data);
      // The thread itself failed: every file it served falls back to its writer's own checkpoint.
      worker.onerror = (event) => {
        for (const [id, reply] of [...this.users]) reply({ id, error: event.message });
      };
      this.worker = worker;
    }
    const id = this.nextId++;
    this.users.set(id, onReply);
    return { id, worker: this.worker };
  },

  leave(id: number): void {
    if (!this.users.delete(id) || this.users.size > 0) return;
    this.worker?.terminate();
    this.worker = undefined;
  },
};

/** How many checkpoint threads run and how many files they serve (tests and diagnostics). */
export function checkpointThreads(): { threads: number; files: number } {
  return { threads: thread.worker ? 1 : 0, files: thread.users.size };
}

/**
 * A WAL this big (after the reset at arming) starts the thread: an idle server, or one that writes a few rows a
 * minute, never pays for it, while the writer's own checkpoint (SQLite's, 1,000 pages) covers the little it writes.
 */
const LAZY_START_BYTES = 256 * 1024;

/**
 * Quiet turns (nothing written, everything folded in) after which a file goes back to its writer's own checkpoint
 * and the thread ends when it served no other: a server written to in bursts should not hold a whole VM (about 6 MB
 * resident, measured) between them. The WAL is truncated first, so the next burst starts the thread again only
 * once it has written LAZY_START_BYTES.
 */
const IDLE_TURNS = 10;

export class WalCheckpointer {
  private id: number | undefined;
  private watch: ReturnType<typeof setInterval> | undefined;
  private worker: Worker | undefined;
  private closing: Promise<void> | undefined;
  private handingBack: Promise<void> | undefined;
  private stopped = false;
  private onClosed: (() => void) | undefined;
  /** The latest turn that found frames in the WAL (tests and diagnostics). */
  lastTurn: CheckpointTurn | undefined;
  /** Turns that found frames to copy. */
  turns = 0;
  /** Times the thread handed this file back after IDLE_TURNS quiet turns (tests and diagnostics). */
  idleStops = 0;

  /**
   * `writer` is the connection whose automatic checkpoint this replaces; `restoredPages` is its threshold should
   * the worker fail (the event store runs with a larger one than SQLite's default).
   */
  constructor(
    private readonly path: string,
    private readonly writer: Database,
    private readonly options: { everyMs?: number; idleTurns?: number; restoredPages?: number; onError?: (message: string) => void } = {},
  ) {}

  /**
   * The server's way in: the WAL is reset now (a TRUNCATE checkpoint on the writer, once, while it is small), and
   * the shared thread starts only once the WAL grows past LAZY_START_BYTES, looked at every `everyMs` (a stat).
   */
  startWhenWritten(): void {
    if (this.worker || this.watch) return;
    try {
      this.writer.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // A reader mid-transaction: the WAL keeps its size, and the thread starts at the first look.
    }
    this.watchWal();
  }

  /** Starts the thread once the WAL has grown past LAZY_START_BYTES, looked at every `everyMs` (a stat). */
  private watchWal(): void {
    if (this.stopped) return;
    this.watch = setInterval(() => {
      let size = 0;
      try {
        size = statSync(`${this.path}-wal`).size;
      } catch {
        return; // no WAL yet
      }
      if (size < LAZY_START_BYTES) return;
      clearInterval(this.watch);
      this.watch = undefined;
      void this.start();
    }, this.options.everyMs ?? 1000);
    this.watch.unref?.();
  }

  /** Whether the thread checkpoints this file now (tests and diagnostics). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Starts checkpointing on the shared thread; resolves once it runs (the writer's own checkpoint stays on until then). */
  start(): Promise<void> {
    return new Promise<void>((ready) => {
      const { id, worker } = thread.join((data) => {
        if (data.ready) {
          this.writer.run("PRAGMA wal_autocheckpoint = 0");
          ready();
        } else if (data.closed) {
          this.onClosed?.();
        } else if (data.idle) {
          this.handBack();
        } else if (data.error !== undefined) {
          this.fallBack(data.error);
          ready();
        } else if (data.log !== undefined) {
          this.turns++;
          this.lastTurn = { log: data.log, checkpointed: data.checkpointed ?? 0, busy: data.busy ?? 0 };
        }
      });
      this.id = id;
      this.worker = worker;
      worker.postMessage({ id, start: true, path: this.path, everyMs: this.options.everyMs ?? 1000, idleTurns: this.options.idleTurns ?? IDLE_TURNS });
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
    this.worker?.postMessage({ id: this.id, close: true });
    this.release();
  }

  /** Quiet for IDLE_TURNS with its WAL emptied: the writer checkpoints for itself again, and the thread starts anew once the WAL grows. */
  private handBack(): void {
    if (this.stopped || this.handingBack || !this.worker) return;
    try {
      this.writer.run(`PRAGMA wal_autocheckpoint = ${this.options.restoredPages ?? DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      return; // the writer is closed: stop() ends the rest
    }
    this.handingBack = this.closeOnThread().then(() => {
      this.handingBack = undefined;
      this.idleStops++;
      this.watchWal();
    });
  }

  private release(): void {
    if (this.id !== undefined) thread.leave(this.id);
    this.id = undefined;
    this.worker = undefined;
  }

  /** Closes this file's connection on the thread (waiting for it, at most 2 s), then leaves the thread. */
  private closeOnThread(): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    return new Promise<void>((done) => {
      const timer = setTimeout(done, 2000);
      this.onClosed = () => {
        clearTimeout(timer);
        done();
      };
      worker.postMessage({ id: this.id, close: true });
    }).finally(() => {
      this.onClosed = undefined;
      this.release();
    });
  }

  /** Closes this file's connection on the thread before the writer's (the last connection to close folds the WAL in). */
  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watch);
    this.watch = undefined;
    this.closing ??= this.handingBack ?? this.closeOnThread();
    return this.closing;
  }
}
