/**
 * The WAL checkpointer's child process: one connection and one timer per SQLite file the server hands it
 * (service.db, events.db), each running `PRAGMA wal_checkpoint(PASSIVE)` every `everyMs` (checkpointer.ts says
 * why, and sends the work over the IPC channel it started this with).
 *
 * A process, not a worker thread, because what a thread ran stays with the server: a worker thread ended gives
 * back its heap, but the pages of the binary's code that its VM ran stay mapped in the server for good (about
 * 4 MB of the server's RSS after a burst of writes, measured on dist/svc; issue 32). This process ends with its
 * memory, code pages included. SQLite's WAL works across processes on one machine (its locks and the -shm index
 * are shared), as it does across threads.
 */
import { Database } from "bun:sqlite";
import { serverChannel } from "../process-roles";
import type { CheckpointJob, CheckpointReply } from "./checkpointer";

// First: from here on a Ctrl-C or `systemctl stop` leaves this process to the server, which closes its files and
// ends it (a signal in its first milliseconds, before this line, still ends it: the server then says so, and the
// writer checkpoints for itself, as it does once closed anyway).
const send = serverChannel<CheckpointReply>("the WAL checkpointer");

type File = { db: Database; timer: ReturnType<typeof setInterval>; idleTurns: number; quiet: number; lastLog: number };
const files = new Map<number, File>();

function checkpoint(id: number): void {
  const f = files.get(id);
  if (!f) return;
  try {
    const r = f.db.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number };
    if (r.log > 0) send({ id, log: r.log, checkpointed: r.checkpointed, busy: r.busy });
    // Nothing written since the last turn and everything folded in: one quiet turn more.
    f.quiet = r.busy === 0 && r.checkpointed === r.log && r.log === f.lastLog ? f.quiet + 1 : 0;
    f.lastLog = r.log;
    if (f.quiet >= f.idleTurns) {
      // Quiet long enough: the WAL is emptied (without waiting: busy means someone writes, and the next turn sees it)
      // and this file is handed back to its writer, which ends this process when it served no other file.
      const t = f.db.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number };
      if (t.busy === 0) {
        clearInterval(f.timer);
        send({ id, idle: true });
      }
    }
  } catch (err) {
    // Another connection mid-checkpoint (SQLITE_BUSY) is a normal turn: the next one catches up.
    if (!String((err as { code?: unknown })?.code).startsWith("SQLITE_BUSY")) send({ id, error: err instanceof Error ? err.message : String(err) });
  }
}

process.on("message", (data: CheckpointJob) => {
  const id = data.id;
  if (data.start) {
    try {
      const db = new Database(data.path, { create: false });
      db.run("PRAGMA busy_timeout = 0");
      files.set(id, { db, timer: setInterval(() => checkpoint(id), data.everyMs), idleTurns: data.idleTurns, quiet: 0, lastLog: -1 });
      send({ id, ready: true });
    } catch (err) {
      send({ id, error: err instanceof Error ? err.message : String(err) });
    }
  } else {
    const f = files.get(id);
    files.delete(id);
    if (f) {
      clearInterval(f.timer);
      try {
        f.db.close();
      } catch {
        // Closed already: nothing to give back.
      }
    }
    send({ id, closed: true });
  }
});

// Jobs sent before this listener was there could be lost: the server sends none until it hears this.
send({ up: true });
