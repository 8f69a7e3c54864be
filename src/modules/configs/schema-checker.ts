import { unavailable, validation } from "../../lib/errors";

/**
 * Longest one check (compiling the schema when the worker has not seen it,
 * then validating every value of the job) may run in the worker. Real
 * checks take milliseconds; past this the worker is ended and the check is
 * VALIDATION (DECISIONS: "an over-budget check is VALIDATION, never a stall").
 */
export const CHECK_BUDGET_MS = 1500;

/**
 * Longest compiling a schema the worker has not seen may take, before the
 * check's own budget starts: ajv compiles wide schemas slowly (a 2,000-branch
 * `oneOf` takes seconds), and a schema is compiled once per worker.
 */
export const COMPILE_BUDGET_MS = 5000;

/**
 * How long the worker stays up after its last check. A worker is a whole JavaScript VM with ajv in it (about
 * 16 MB resident on the compiled binary, measured, and given back when it ends), and configs are written a few
 * times a day: an idle server should not hold it. The next check starts a fresh worker (ajv loads in tens of
 * milliseconds, outside the check's budget) and compiles its schema again.
 */
export const WORKER_IDLE_MS = 10_000;

/** Checks waiting for the worker beyond which a new one is refused (503, retry): a flood waits in no unbounded queue. */
const MAX_WAITING = 64;

/** One check: the schema (stored JSON and its hash), the config it belongs to (null: not stored yet) and the values. */
export type SchemaCheck = { key: string | null; schema: string; hash: string; values: { value: unknown; label: string }[] };

export type SchemaJob = ({ id: number } & SchemaCheck & { forget?: undefined }) | { forget: string };

export type SchemaReply =
  | { ready: true }
  /** The job's schema is compiled: its values' check starts now. */
  | { ready?: undefined; compiled: true; id: number }
  | { ready?: undefined; compiled?: undefined; id: number; problems?: string[]; error?: { message: string; detail?: string } };

type RefWorker = Worker & { ref?: () => void; unref?: () => void };

type Pending = { job: { id: number } & SchemaCheck; resolve: (problems: string[]) => void; reject: (err: unknown) => void };

/** Where the worker's code is: its own entry point inside the compiled binary (package.json "build"), else the source file. */
function workerUrl(): string {
  return import.meta.url.startsWith("file:///$bunfs/") ? "./modules/configs/schema-worker.ts" : new URL("./schema-worker.ts", import.meta.url).href;
}

/**
 * Validates config values against their JSON Schemas in a worker thread, one
 * check at a time, each under CHECK_BUDGET_MS: ajv work can be large (a
 * schema saved before the cost check existed, a big value against a wide
 * schema), and on the request loop it would hold every other request.
 *
 * The worker starts on the first check, not with the server (ajv and its
 * formats are costly to load); it keeps its compiled validators until it is
 * ended, WORKER_IDLE_MS after its last check. A check past its budget ends
 * the worker (the only way to stop synchronous ajv code) and the next check
 * starts a fresh one. Idle, the worker never keeps the process up.
 */
export class SchemaChecker {
  #worker: RefWorker | undefined;
  /** The worker has loaded ajv: checks sent from now on are timed. */
  #ready = false;
  readonly #waiting: Pending[] = [];
  #running: Pending | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #nextId = 0;
  #closed = false;
  readonly #idleMs: number;

  /** `idleMs`: how long the worker outlives its last check (WORKER_IDLE_MS; tests shorten it). */
  constructor(options: { idleMs?: number } = {}) {
    this.#idleMs = options.idleMs ?? WORKER_IDLE_MS;
  }

  /** The problems of the values (each starting with its label), or [] when all fit; VALIDATION when the schema cannot be used or the check runs over budget. */
  check(check: SchemaCheck): Promise<string[]> {
    if (this.#closed) return Promise.reject(unavailable(1));
    if (this.#waiting.length >= MAX_WAITING) return Promise.reject(unavailable(1));
    return new Promise<string[]>((resolve, reject) => {
      this.#waiting.push({ job: { id: ++this.#nextId, ...check }, resolve, reject });
      this.#pump();
    });
  }

  /** Drops the worker's validator of a deleted config. */
  forget(configId: string): void {
    this.#worker?.postMessage({ forget: configId } satisfies SchemaJob);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#idle);
    this.#stopWorker();
    for (const pending of [...(this.#running ? [this.#running] : []), ...this.#waiting.splice(0)]) pending.reject(unavailable(1));
    this.#running = undefined;
  }

  /** Whether a worker is up (tests and diagnostics). */
  get workerRunning(): boolean {
    return this.#worker !== undefined;
  }

  #pump(): void {
    if (this.#running) return;
    clearTimeout(this.#idle);
    if (this.#waiting.length === 0) {
      if (this.#worker) {
        // A new check clears this timer (check() pumps at once), so when it fires nothing waits or runs.
        this.#idle = setTimeout(() => this.#stopWorker(), this.#idleMs);
        this.#idle.unref?.();
      }
      return;
    }
    const worker = this.#start();
    // While a check waits or runs the worker holds the event loop (a test or a one-shot command waits for it); idle it does not.
    worker.ref?.();
    if (!this.#ready) return;
    const next = this.#waiting.shift()!;
    this.#running = next;
    this.#timer = setTimeout(() => this.#end(next, "over budget"), COMPILE_BUDGET_MS + CHECK_BUDGET_MS);
    worker.postMessage(next.job satisfies SchemaJob);
  }

  #start(): RefWorker {
    if (this.#worker) return this.#worker;
    const worker: RefWorker = new Worker(workerUrl());
    worker.unref?.();
    worker.onmessage = ({ data }: MessageEvent<SchemaReply>) => {
      if (data.ready) {
        this.#ready = true;
        this.#pump();
      } else if (data.compiled) {
        const running = this.#running;
        if (running?.job.id !== data.id) return;
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => this.#end(running, "over budget"), CHECK_BUDGET_MS);
      } else this.#settle(data);
    };
    worker.onerror = (event) => {
      event.preventDefault?.();
      if (this.#running) this.#end(this.#running, "failed");
      else if (!this.#ready) {
        // The worker could not start: nothing can be checked now; callers may retry.
        this.#stopWorker();
        for (const pending of this.#waiting.splice(0)) pending.reject(unavailable(1));
      }
    };
    this.#worker = worker;
    return worker;
  }

  #stopWorker(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#ready = false;
  }

  #settle(reply: Extract<SchemaReply, { problems?: string[] }>): void {
    const running = this.#running;
    if (!running || running.job.id !== reply.id) return;
    clearTimeout(this.#timer);
    this.#running = undefined;
    this.#worker?.unref?.();
    if (reply.error) running.reject(validation(reply.error.message, reply.error.detail));
    else running.resolve(reply.problems ?? []);
    this.#pump();
  }

  /** Ends the worker under a check that ran over budget (or killed it): that check is VALIDATION, the others go on in a fresh worker. */
  #end(running: Pending, why: "over budget" | "failed"): void {
    if (this.#running !== running) return;
    clearTimeout(this.#timer);
    this.#running = undefined;
    this.#stopWorker();
    const labels = [...new Set(running.job.values.map((v) => v.label))].join(", ") || "schema";
    running.reject(
      why === "over budget"
        ? validation(
            "Checking the value against the config's schema takes too long",
            `${labels}: checking against the schema took longer than ${CHECK_BUDGET_MS} ms (or compiling it longer than ${COMPILE_BUDGET_MS} ms), the most one check may take; simplify the schema (fewer anyOf/oneOf/$ref branches) or the value`,
          )
        : validation("The value could not be checked against the config's schema", `${labels}: the check failed; simplify the schema or the value`),
    );
    this.#pump();
  }
}
