
/**
 * The analysis workers' code (a Blob URL: no file to ship beside the
 * binary). Each holds one connection to events.db that only reads
 * (query_only). Not memory-mapped: mmap_size = 1 GiB made an analysis about
 * a fifth faster, but every page it touched then counted in the server's
 * RSS (over 1 GB after one analysis of the bench's experiment).
 */
const ANALYSIS_WORKER = `
const { Database } = require("bun:sqlite");
let db;
const statements = new Map();
self.onmessage = ({ data }) => {
  if (data.close) {
    for (const s of statements.values()) s.finalize();
    statements.clear();
    db?.close();
    db = undefined;
    postMessage({ id: data.id, rows: [] });
    return;
  }
  try {
    if (!db) {
      db = new Database(data.path, { create: false });
      db.run("PRAGMA busy_timeout = 5000");
      db.run("PRAGMA query_only = 1");
    }
    let st = statements.get(data.sql);
    if (!st) {
      if (statements.size > 50) {
        for (const s of statements.values()) s.finalize();
        statements.clear();
      }
      st = db.prepare(data.sql);
      statements.set(data.sql, st);
    }
    postMessage({ id: data.id, rows: st.all(...data.params) });
  } catch (err) {
    postMessage({ id: data.id, error: err instanceof Error ? err.message : String(err) });
  }
};
`;


/** How long analysis workers stay up after their last query (their connections and heaps go with them). */
const ANALYSIS_IDLE_MS = 60_000;

type RefWorker = Worker & { ref?: () => void; unref?: () => void };

type WorkerCall = { resolve: (rows: unknown[]) => void; reject: (err: unknown) => void; worker?: number };

/**
 * Worker threads that run every read of events (analyses, series, counts)
 * on their own connections: an analysis takes seconds of CPU, and a raw
 * series over a million events as much, which on the server's thread would
 * stall every request (ingest first) for as long; here the event loop stays
 * free and the slices of one analysis run on as many cores as there are
 * workers. Started on first use, stopped after a minute idle. Idle, the
 * workers are unref'd (they never keep the process up); while any statement
 * runs they are ref'd: with only unref'd workers to wait for, Bun's event loop spins on
 * the main thread, which took a core from two busy slices (a count took
 * 1.9 s instead of 1.3 s where nothing else, like a listening server, held
 * the loop).
 */
export class AnalysisPool {
  private workers: Worker[] = [];
  /** Statements sent to each worker and not answered yet. */
  private queued: number[] = [];
  /** Statements (run) not answered yet, on any worker; a stop's close calls are not counted. */
  private busy = 0;
  private readonly calls = new Map<number, WorkerCall>();
  private nextId = 0;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private url: string | undefined;

  constructor(
    private readonly path: string,
    readonly size: number,
  ) {}

  /** Statements in flight (none: an analysis may have every worker). */
  get pending(): number {
    return this.calls.size;
  }

  /**
   * Runs `sql` on worker `index` (its own queue: one statement at a time), or with `null` on the worker with the
   * fewest statements queued (small analyses side by side: one per core).
   */
  run(index: number | null, sql: string, params: (string | number | null)[]): Promise<unknown[]> {
    if (this.workers.length === 0) this.start();
    clearTimeout(this.idle);
    this.busy++;
    this.setRef(true);
    const id = ++this.nextId;
    const worker = index === null ? this.queued.indexOf(Math.min(...this.queued)) : index % this.workers.length;
    this.queued[worker]!++;
    return new Promise<unknown[]>((resolve, reject) => {
      this.calls.set(id, { resolve, reject, worker });
      this.workers[worker]!.postMessage({ id, path: this.path, sql, params });
    }).finally(() => {
      if (--this.busy === 0 && this.workers.length > 0) {
        this.setRef(false);
        this.idle = setTimeout(() => void this.stop(), ANALYSIS_IDLE_MS);
        this.idle.unref?.();
      }
    });
  }

  /** While any statement runs the workers hold the event loop (see the class comment); idle, they never do. */
  private setRef(busy: boolean): void {
    for (const worker of this.workers as RefWorker[]) {
      if (busy) worker.ref?.();
      else worker.unref?.();
    }
  }

  private start(): void {
    this.url ??= URL.createObjectURL(new Blob([ANALYSIS_WORKER], { type: "application/javascript" }));
    for (let i = 0; i < this.size; i++) {
      const worker = new Worker(this.url);
      (worker as RefWorker).unref?.();
      worker.onmessage = ({ data }: MessageEvent<{ id: number; rows?: unknown[]; error?: string }>) => {
        const call = this.calls.get(data.id);
        if (!call) return;
        this.calls.delete(data.id);
        if (call.worker !== undefined && this.queued[call.worker]! > 0) this.queued[call.worker]!--;
        if (data.error !== undefined) call.reject(new Error(data.error));
        else call.resolve(data.rows ?? []);
      };
      worker.onerror = (event) => this.fail(new Error(`analysis worker failed: ${event.message}`));
      this.workers.push(worker);
    }
    this.queued = this.workers.map(() => 0);
  }

  /** A worker died: every call in flight fails, and the next call starts fresh workers. */
  private fail(err: Error): void {
    for (const w of this.workers) w.terminate();
    this.workers = [];
    for (const call of this.calls.values()) call.reject(err);
    this.calls.clear();
  }

  /** Closes the workers' connections, then the workers; calls still in flight fail. */
  async stop(): Promise<void> {
    clearTimeout(this.idle);
    const workers = this.workers;
    this.workers = [];
    if (workers.length === 0) return;
    // What this stop ends: the calls in flight on these workers and its own close calls. A call made meanwhile
    // starts new workers and is not this stop's to fail.
    const ending = new Set(this.calls.keys());
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            const id = ++this.nextId;
            ending.add(id);
            const timer = setTimeout(resolve, 2000);
            this.calls.set(id, {
              resolve: () => {
                clearTimeout(timer);
                resolve();
              },
              reject: () => resolve(),
            });
            worker.postMessage({ id, close: true });
          }),
      ),
    );
    for (const w of workers) w.terminate();
    for (const id of ending) {
      const call = this.calls.get(id);
      this.calls.delete(id);
      call?.reject(new Error("event store closed"));
    }
  }
}

