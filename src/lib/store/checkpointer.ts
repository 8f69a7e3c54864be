import type { Subprocess } from "bun";
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { type RoleCommand, WAL_CHECKPOINTER_ROLE_ENV, roleCommand, spawnRole } from "../process-roles";

/**
 * WAL checkpoints off the server's thread.
 *
 * SQLite's automatic checkpoint runs inside the COMMIT that crosses its
 * threshold (1,000 pages by default), on the connection that commits: it
 * copies the WAL back into the database file and syncs both, and on a busy
 * server that is the event loop stalled for milliseconds on fsync every few
 * hundred writes (a third of the public intake's time, measured). Here the
 * writer's automatic checkpoint is off and a child process (checkpoint-process.ts) with its own
 * connection runs `PRAGMA wal_checkpoint(PASSIVE)` every `everyMs`: the same
 * checkpoint SQLite would run (PASSIVE never waits for readers or writers,
 * so nothing on the server's thread waits for it either), and the same
 * durability (synchronous=NORMAL: a commit is on disk at the next
 * checkpoint or WAL sync; NOTES.md).
 *
 * If the process cannot start or fails, the writer gets its automatic
 * checkpoint back, so the WAL never grows without bound.
 */
/** SQLite's default automatic checkpoint threshold, restored when the checkpoint process fails. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

export type CheckpointTurn = { log: number; checkpointed: number; busy: number };

/** What the server sends its checkpoint process: start checkpointing a file (by its own connection), or close it. */
export type CheckpointJob = { id: number; start: true; path: string; everyMs: number; idleTurns: number } | { id: number; start?: undefined; close: true };

/** A file's news; `ended`: the process itself ended or could not be used (the file may go back to one later). */
type Reply = { id: number; ready?: true; closed?: true; idle?: true; error?: string; ended?: true } & Partial<CheckpointTurn>;

/** What the checkpoint process answers: that it is up (jobs are sent from then on), or a file's news. */
export type CheckpointReply = { up: true } | (Reply & { up?: undefined });

/** Longest the checkpoint process may take to say it is up: past it, it is killed and every file it was to serve falls back to its writer. */
const START_BUDGET_MS = 10_000;

/** How the checkpoint process is started (src/lib/process-roles.ts): from source, bun runs checkpoint-process.ts. */
const processCommand = (): RoleCommand => roleCommand(WAL_CHECKPOINTER_ROLE_ENV, new URL("./checkpoint-process.ts", import.meta.url));

/**
 * The one checkpoint process of the server, shared by every WalCheckpointer (a process is a whole JavaScript VM,
 * and the server has two SQLite files): started with the first checkpointer, ended with the last. A child process
 * rather than a worker thread: see checkpoint-process.ts.
 */
const helper = {
  child: undefined as Subprocess | undefined,
  /** The child said it is up: jobs go to it at once; until then they wait here. */
  up: false,
  queued: [] as CheckpointJob[],
  startTimer: undefined as ReturnType<typeof setTimeout> | undefined,
  nextId: 1,
  users: new Map<number, (reply: Reply) => void>(),

  /** Joins the process (started if need be); throws when it cannot be started. */
  join(onReply: (reply: Reply) => void): number {
    if (!this.child) this.spawn();
    const id = this.nextId++;
    this.users.set(id, onReply);
    return id;
  },

  spawn(): void {
    this.queued = [];
    const child = spawnRole<CheckpointReply>(
      processCommand(),
      (data) => {
        if (this.child !== child) return;
        if (data.up) {
          clearTimeout(this.startTimer);
          this.up = true;
          for (const job of this.queued.splice(0)) this.send(job);
        } else this.users.get(data.id)?.(data);
      },
      // Ended on its own (crashed, killed by someone else): every file it served falls back to its writer.
      (code, signal) => {
        if (this.child === child) this.failed(`the checkpoint process ended (${signal ?? `exit code ${code}`})`);
      },
    );
    this.child = child;
    this.up = false;
    this.startTimer = setTimeout(() => {
      if (this.child === child && !this.up) this.failed("the checkpoint process did not start in time");
    }, START_BUDGET_MS);
    this.startTimer.unref?.();
  },

  send(job: CheckpointJob): void {
    if (!this.child) return;
    if (!this.up) {
      this.queued.push(job);
      return;
    }
    try {
      this.child.send(job);
    } catch (err) {
      this.failed(`the checkpoint process could not be reached (${err instanceof Error ? err.message : String(err)})`);
    }
  },

  /** The process is gone or unusable: it is stopped, and every file it served hears why (and falls back). */
  failed(message: string): void {
    this.stop();
    for (const [id, reply] of [...this.users]) {
      try {
        reply({ id, error: message, ended: true });
      } catch {
        // One file's callback failing must not leave the others without a checkpoint.
      }
    }
  },

  leave(id: number): void {
    if (!this.users.delete(id) || this.users.size > 0) return;
    this.stop();
  },

  stop(): void {
    clearTimeout(this.startTimer);
    const child = this.child;
    this.child = undefined;
    this.up = false;
    this.queued = [];
    // By now every file's connection is closed in it (or given up on): nothing of it is worth waiting for. It
    // ignores SIGINT and SIGTERM (serverChannel), which reach it with the server's own.
    child?.kill("SIGKILL");
  },
};

/** Whether the checkpoint process runs, its id, and how many files it serves (tests and diagnostics). */
export function checkpointProcess(): { running: boolean; pid: number | undefined; files: number } {
  return { running: helper.child !== undefined, pid: helper.child?.pid, files: helper.users.size };
}

/**
 * A WAL this big (after the reset at arming) starts the checkpoint process: an idle server, or one that writes a few rows a
 * minute, never pays for it, while the writer's own checkpoint (SQLite's, 1,000 pages) covers the little it writes.
 */
const LAZY_START_BYTES = 256 * 1024;

/**
 * Quiet turns (nothing written, everything folded in) after which a file goes back to its writer's own checkpoint
 * and the process ends when it served no other: a server written to in bursts should not keep a whole VM between
 * them. The WAL is truncated first, so the next burst starts the process again only
 * once it has written LAZY_START_BYTES.
 */
const IDLE_TURNS = 10;

export class WalCheckpointer {
  private id: number | undefined;
  private watch: ReturnType<typeof setInterval> | undefined;
  /** This file is served by the checkpoint process (from the start message until it is closed or fails). */
  private joined = false;
  private closing: Promise<void> | undefined;
  private handingBack: Promise<void> | undefined;
  private stopped = false;
  private onClosed: (() => void) | undefined;
  /** The latest turn that found frames in the WAL (tests and diagnostics). */
  lastTurn: CheckpointTurn | undefined;
  /** Turns that found frames to copy. */
  turns = 0;
  /** Times the process handed this file back after IDLE_TURNS quiet turns (tests and diagnostics). */
  idleStops = 0;

  /**
   * `writer` is the connection whose automatic checkpoint this replaces; `restoredPages` is its threshold should
   * the checkpoint process fail (the event store runs with a larger one than SQLite's default).
   */
  constructor(
    private readonly path: string,
    private readonly writer: Database,
    private readonly options: { everyMs?: number; idleTurns?: number; restoredPages?: number; onError?: (message: string) => void } = {},
  ) {}

  /**
   * The server's way in: the WAL is reset now (a TRUNCATE checkpoint on the writer, once, while it is small), and
   * the shared process starts only once the WAL grows past LAZY_START_BYTES, looked at every `everyMs` (a stat).
   */
  startWhenWritten(): void {
    if (this.joined || this.watch) return;
    try {
      this.writer.run("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch {
      // A reader mid-transaction: the WAL keeps its size, and the process starts at the first look.
    }
    this.watchWal();
  }

  /** Starts the process once the WAL has grown past LAZY_START_BYTES, looked at every `everyMs` (a stat). */
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

  /** Whether the checkpoint process checkpoints this file now (tests and diagnostics). */
  get running(): boolean {
    return this.joined;
  }

  /** Starts checkpointing in the shared process; resolves once it runs (the writer's own checkpoint stays on until then). */
  start(): Promise<void> {
    return new Promise<void>((ready) => {
      const onReply = (data: Reply) => {
        if (data.ready) {
          this.writer.run("PRAGMA wal_autocheckpoint = 0");
          ready();
        } else if (data.closed) {
          this.onClosed?.();
        } else if (data.idle) {
          this.handBack();
        } else if (data.error !== undefined) {
          this.fallBack(data.error, data.ended === true);
          ready();
        } else if (data.log !== undefined) {
          this.turns++;
          this.lastTurn = { log: data.log, checkpointed: data.checkpointed ?? 0, busy: data.busy ?? 0 };
        }
      };
      let id: number;
      try {
        id = helper.join(onReply);
      } catch (err) {
        // The process could not be started (spawn failed): the writer keeps its own checkpoint.
        this.options.onError?.(`the checkpoint process could not be started (${err instanceof Error ? err.message : String(err)})`);
        ready();
        return;
      }
      this.id = id;
      this.joined = true;
      helper.send({ id, start: true, path: this.path, everyMs: this.options.everyMs ?? 1000, idleTurns: this.options.idleTurns ?? IDLE_TURNS });
    });
  }

  /**
   * The writer checkpoints for itself again. When the process ended (killed from outside, the OOM killer), the
   * file goes back to a new one once its WAL grows again, as after an idle hand-back; a file the process could not
   * open stays with its writer.
   */
  private fallBack(message: string, processEnded: boolean): void {
    this.options.onError?.(message);
    try {
      this.writer.run(`PRAGMA wal_autocheckpoint = ${this.options.restoredPages ?? DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The writer is closed: nothing left to checkpoint for.
      processEnded = false;
    }
    if (this.id !== undefined) helper.send({ id: this.id, close: true });
    this.release();
    // Its connection went with the process: a close waiting for it is over.
    this.onClosed?.();
    if (processEnded && !this.stopped && !this.handingBack) this.startWhenWritten();
  }

  /** Quiet for IDLE_TURNS with its WAL emptied: the writer checkpoints for itself again, and the process starts anew once the WAL grows. */
  private handBack(): void {
    if (this.stopped || this.handingBack || !this.joined) return;
    try {
      this.writer.run(`PRAGMA wal_autocheckpoint = ${this.options.restoredPages ?? DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      return; // the writer is closed: stop() ends the rest
    }
    this.handingBack = this.closeInProcess().then(() => {
      this.handingBack = undefined;
      this.idleStops++;
      this.watchWal();
    });
  }

  private release(): void {
    if (this.id !== undefined) helper.leave(this.id);
    this.id = undefined;
    this.joined = false;
  }

  /** Closes this file's connection in the process (waiting for it, at most 2 s), then leaves the process. */
  private closeInProcess(): Promise<void> {
    const id = this.id;
    if (!this.joined || id === undefined) return Promise.resolve();
    return new Promise<void>((done) => {
      const timer = setTimeout(done, 2000);
      this.onClosed = () => {
        clearTimeout(timer);
        done();
      };
      helper.send({ id, close: true });
    }).finally(() => {
      this.onClosed = undefined;
      this.release();
    });
  }

  /** Closes this file's connection in the process before the writer's (the last connection to close folds the WAL in). */
  stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watch);
    this.watch = undefined;
    this.closing ??= this.handingBack ?? this.closeInProcess();
    return this.closing;
  }
}
