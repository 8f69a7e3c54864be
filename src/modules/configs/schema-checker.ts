import type { Subprocess } from "bun";
import { unavailable, validation } from "../../lib/errors";
import { type RoleCommand, SCHEMA_CHECKER_ROLE_ENV, roleCommand, spawnRole } from "../../lib/process-roles";

/**
 * Longest one check (compiling the schema when the checker has not seen it,
 * then validating every value of the job) may run in the checker. Real
 * checks take milliseconds; past this the checker is killed and the check is
 * VALIDATION (DECISIONS: "an over-budget check is VALIDATION, never a stall").
 */
export const CHECK_BUDGET_MS = 1500;

/**
 * Longest compiling a schema the checker has not seen may take, before the
 * check's own budget starts: ajv compiles wide schemas slowly (a 2,000-branch
 * `oneOf` takes seconds), and a schema is compiled once per checker process.
 */
export const COMPILE_BUDGET_MS = 5000;

/**
 * How long the checker process stays up after its last check. It is a whole JavaScript VM with ajv in it (about
 * 16 MB of its own heap), and configs are written a few times a day: an idle server should not keep it. The next
 * check starts a fresh one (starting it and loading ajv take tens of milliseconds, outside the check's budget) and
 * compiles its schema again.
 */
export const CHECKER_IDLE_MS = 10_000;

/**
 * Longest a new checker may take to say it is ready (start, load ajv: tens of milliseconds): past it the child is
 * killed and the checks waiting for it are refused (503, retry), so that none waits on a start that hangs.
 */
const START_BUDGET_MS = 10_000;

/** Checks waiting for the checker beyond which a new one is refused (503, retry): a flood waits in no unbounded queue. */
const MAX_WAITING = 64;

/** One check: the schema (stored JSON and its hash), the config it belongs to (null: not stored yet) and the values. */
export type SchemaCheck = { key: string | null; schema: string; hash: string; values: { value: unknown; label: string }[] };

export type SchemaJob = ({ id: number } & SchemaCheck & { forget?: undefined }) | { forget: string };

export type SchemaReply =
  | { ready: true }
  /** The job's schema is compiled: its values' check starts now. */
  | { ready?: undefined; compiled: true; id: number }
  | { ready?: undefined; compiled?: undefined; id: number; problems?: string[]; error?: { message: string; detail?: string } };

type Pending = { job: { id: number } & SchemaCheck; resolve: (problems: string[]) => void; reject: (err: unknown) => void };

/** How the checker process is started (src/lib/process-roles.ts): from source, bun runs schema-check-process.ts. */
const checkerCommand = (): RoleCommand => roleCommand(SCHEMA_CHECKER_ROLE_ENV, new URL("./schema-check-process.ts", import.meta.url));

/**
 * Validates config values against their JSON Schemas in a child process, one check at a time, each under
 * CHECK_BUDGET_MS: ajv work can be large (a schema saved before the cost check existed, a big value against a
 * wide schema), and on the request loop it would hold every other request.
 *
 * The child starts on the first check, not with the server (ajv and its formats are costly to load); it keeps its
 * compiled validators until it is ended, CHECKER_IDLE_MS after its last check. A check past its budget kills the
 * child (the only way to stop synchronous ajv code) and the next check starts a fresh one. Idle, the child never
 * keeps the server's process up, and it ends by itself when the server's process does (schema-check-process.ts).
 * A process rather than a worker thread: see schema-check-process.ts.
 */
export class SchemaChecker {
  #child: Subprocess | undefined;
  /** The child has loaded ajv: checks sent from now on are timed. */
  #ready = false;
  readonly #waiting: Pending[] = [];
  #running: Pending | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #startTimer: ReturnType<typeof setTimeout> | undefined;
  #nextId = 0;
  #closed = false;
  readonly #idleMs: number;
  readonly #startBudgetMs: number;
  readonly #command: () => RoleCommand;

  /**
   * `idleMs`: how long the child outlives its last check (CHECKER_IDLE_MS; tests shorten it). `startBudgetMs` and
   * `command` (START_BUDGET_MS, checkerCommand): tests give a child that never says it is ready.
   */
  constructor(options: { idleMs?: number; startBudgetMs?: number; command?: () => RoleCommand } = {}) {
    this.#idleMs = options.idleMs ?? CHECKER_IDLE_MS;
    this.#startBudgetMs = options.startBudgetMs ?? START_BUDGET_MS;
    this.#command = options.command ?? checkerCommand;
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

  /** Drops the child's validator of a deleted config. */
  forget(configId: string): void {
    if (this.#ready) this.#send({ forget: configId });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#idle);
    this.#stopChild();
    this.#running?.reject(unavailable(1));
    this.#running = undefined;
    this.#refuseWaiting();
  }

  /** The checker process's id while one is up (tests and diagnostics). */
  get childPid(): number | undefined {
    return this.#child?.pid;
  }

  #send(job: SchemaJob): void {
    try {
      this.#child?.send(job);
    } catch {
      // The channel could not take it (closing, or the job could not be sent): the check it carried fails now,
      // rather than waiting out its time budget; a fresh child takes the next one.
      if (this.#running) this.#end(this.#running, "failed");
    }
  }

  #pump(): void {
    if (this.#running) return;
    clearTimeout(this.#idle);
    if (this.#waiting.length === 0) {
      if (this.#child) {
        // A new check clears this timer (check() pumps at once), so when it fires nothing waits or runs.
        this.#idle = setTimeout(() => this.#stopChild(), this.#idleMs);
        this.#idle.unref?.();
      }
      return;
    }
    const child = this.#start();
    if (!child) return;
    // While a check waits or runs the child holds the event loop (a test or a one-shot command waits for it); idle it does not.
    child.ref();
    if (!this.#ready) return;
    const next = this.#waiting.shift()!;
    this.#running = next;
    this.#timer = setTimeout(() => this.#end(next, "over budget"), COMPILE_BUDGET_MS + CHECK_BUDGET_MS);
    this.#send(next.job);
  }

  /** The running child, or a new one; undefined (and every waiting check refused, 503) when none can be started. */
  #start(): Subprocess | undefined {
    if (this.#child) return this.#child;
    let child: Subprocess;
    try {
      child = spawnRole<SchemaReply>(
        this.#command(),
        (data) => {
          if (this.#child !== child) return;
          if (data.ready) {
            clearTimeout(this.#startTimer);
            this.#ready = true;
            this.#pump();
          } else if (data.compiled) {
            const running = this.#running;
            if (running?.job.id !== data.id) return;
            clearTimeout(this.#timer);
            this.#timer = setTimeout(() => this.#end(running, "over budget"), CHECK_BUDGET_MS);
          } else this.#settle(data);
        },
        () => {
          // A child this checker ended itself is forgotten first; only one that ended on its own is news.
          if (this.#child !== child) return;
          if (this.#running) this.#end(this.#running, "failed");
          else if (this.#ready) this.#stopChild();
          else this.#startFailed();
        },
      );
    } catch {
      this.#refuseWaiting();
      return undefined;
    }
    this.#child = child;
    this.#startTimer = setTimeout(() => {
      if (this.#child === child && !this.#ready) this.#startFailed();
    }, this.#startBudgetMs);
    this.#startTimer.unref?.();
    return child;
  }

  /** The child ended or hung before it was ready: nothing can be checked now, and the checks waiting are refused (503; callers may retry). */
  #startFailed(): void {
    this.#stopChild();
    this.#refuseWaiting();
  }

  #refuseWaiting(): void {
    for (const pending of this.#waiting.splice(0)) pending.reject(unavailable(1));
  }

  #stopChild(): void {
    clearTimeout(this.#startTimer);
    const child = this.#child;
    this.#child = undefined;
    this.#ready = false;
    child?.kill("SIGKILL");
  }

  #settle(reply: Extract<SchemaReply, { problems?: string[] }>): void {
    const running = this.#running;
    if (!running || running.job.id !== reply.id) return;
    clearTimeout(this.#timer);
    this.#running = undefined;
    this.#child?.unref();
    if (reply.error) running.reject(validation(reply.error.message, reply.error.detail));
    else running.resolve(reply.problems ?? []);
    this.#pump();
  }

  /** Kills the child under a check that ran over budget (or that it died in): that check is VALIDATION, the others go on in a fresh child. */
  #end(running: Pending, why: "over budget" | "failed"): void {
    if (this.#running !== running) return;
    clearTimeout(this.#timer);
    this.#running = undefined;
    this.#stopChild();
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
