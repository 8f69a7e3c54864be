import type { TSchema } from "@sinclair/typebox";
import type { TypeCheck } from "@sinclair/typebox/compiler";
import type { AuditActor } from "./audit";
import type { Env } from "./envs";
import { ApiError, notFound, validation } from "./errors";
import type { Queryable, Store, Tx } from "./store";

/**
 * Publishable changes as data: a change is `{kind, ...body}`, stored as JSON,
 * shown, checked for staleness and applied later, by whoever holds it
 * (scheduled changes today; change requests later). Each module declares its
 * kinds in its manifest (`changes`), with the body's TypeBox schema from its
 * contract.ts; app.ts registers them here, so nothing in src/lib names a
 * module and a holder of changes never imports one.
 */

/** What a change touches: one resource (by type and name) and the env it publishes on (null: every env, e.g. a segment). */
export type ChangeTarget = { type: string; name: string };
export type ChangeDescription = { target: ChangeTarget; env: Env | null; summary: string };

/** A change as stored: its kind and the kind's body, flat (`{kind: "gate.rules", name, env, rules}`). */
export type StoredChange = { kind: string } & Record<string, unknown>;

/**
 * One kind of change. `B` is its body (the change without `kind`), checked
 * against `schema` before any of the functions below sees it.
 */
export type ChangeKind<B = any> = {
  /** `<resource>.<what>`, e.g. `gate.rules`. */
  kind: string;
  /** The body's TypeBox schema (the module's contract.ts); unknown fields are refused. */
  schema: TSchema;
  /** What it changes, for lists and audit rows (no store access: shown for many at once). */
  describe(projectId: string, body: B): ChangeDescription;
  /** Validates it against what exists now, without changing anything: throws VALIDATION or NOT_FOUND. */
  check(projectId: string, body: B): Promise<void>;
  /**
   * What is published now for its target and env (`version 7`), read through `q` (a transaction's, to read
   * inside it): a change whose fingerprint moved since it was made is stale.
   */
  fingerprint(q: Queryable, projectId: string, body: B): Promise<string>;
  /** Publishes it through the module's own service method (inside an outer `store.write` it joins that transaction). */
  apply(projectId: string, body: B, actor: AuditActor): Promise<unknown>;
  /** What it does, in a line, for the people choosing a kind (a change request's dialog). */
  description?: string;
  /**
   * What is published now for its target, in the shape of `proposed` (a gate's rules array, a config's
   * `{value, rules}`…), read through `q`: a change request shows the two side by side. Absent: no diff for this
   * kind. Bounded: a big list is shown as counts and a bounded sample, never whole.
   */
  current?(q: Queryable, projectId: string, body: B): Promise<unknown>;
  /** The change's payload in the shape `current` answers (default: the body as it is). */
  proposed?(q: Queryable, projectId: string, body: B): Promise<unknown>;
};

/** Where an env that requires approval is asked (see ChangeRegistry.setApprovalCheck). */
export type ApprovalCheck = (input: {
  projectId: string;
  change: StoredChange;
  description: ChangeDescription;
  actor: AuditActor;
  /**
   * `schedule`: the change is being scheduled (approval must exist ahead; a check, nothing taken);
   * `hold`: in the holder's transaction, the approval is taken for this holder (one approval, one holder);
   * `apply`: in the transaction publishing it, the approval the holder took is used up.
   */
  phase: "schedule" | "hold" | "apply";
  /** Who holds the change and its id there (`schedule`, `sch_…`), for the check to find an approval made for it. */
  holder: { type: string; id: string };
  /** The holder's transaction (`hold` and `apply`): what the check takes or uses up commits with it, or not at all. */
  tx?: Tx;
}) => Promise<void>;

/** Gives back, in the holder's transaction, the approvals a holder took and will not publish (a schedule cancelled or failed). */
export type ApprovalRelease = (input: { tx: Tx; projectId: string; holder: { type: string; id: string }; actor: AuditActor }) => Promise<void>;

/** A change whose body was checked against its kind's schema. */
export type ParsedChange = { kind: ChangeKind; body: Record<string, unknown>; change: StoredChange };

const MAX_ERRORS = 5;

export class ChangeRegistry {
  private readonly registered = new Map<string, { kind: ChangeKind; checker: TypeCheck<TSchema> | undefined }>();
  /** Modules' kinds not made yet (registerLater). */
  private readonly later: (() => ChangeKind[])[] = [];
  private approvalCheck: ApprovalCheck = async () => {};
  private approvalRelease: ApprovalRelease = async () => {};

  register(kind: ChangeKind): void {
    if (this.registered.has(kind.kind)) throw new Error(`change kind ${kind.kind} registered twice`);
    this.registered.set(kind.kind, { kind, checker: undefined });
  }

  /**
   * Kinds made when the registry is first read: a module's kinds load its change code and schemas, and its
   * service (made on first use, src/app.ts), which a server's start need not pay for (issue 32).
   */
  registerLater(kinds: () => ChangeKind[]): void {
    this.later.push(kinds);
  }

  /** Every kind, the later ones made first. */
  private get kinds(): Map<string, { kind: ChangeKind; checker: TypeCheck<TSchema> | undefined }> {
    while (this.later.length > 0) for (const kind of this.later.shift()!()) this.register(kind);
    return this.registered;
  }

  /** Every registered kind's name, sorted. */
  names(): string[] {
    return [...this.kinds.keys()].sort();
  }

  /** Every registered kind, sorted by name. */
  all(): ChangeKind[] {
    return this.names().map((name) => this.kinds.get(name)!.kind);
  }

  /**
   * Checks a change's shape: a known kind, its body matching the kind's schema. `field` prefixes the
   * VALIDATION detail (`change.rules[0].passPercentage: …`).
   */
  async parse(raw: unknown, field = "change"): Promise<ParsedChange> {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw validation("A change is an object with its kind", `${field}: expected an object`);
    const { kind: name, ...body } = raw as Record<string, unknown>;
    if (typeof name !== "string") throw validation("A change names its kind", `${field}.kind: expected one of ${this.names().join(", ")}`);
    const entry = this.kinds.get(name);
    if (!entry) throw validation(`Unknown change kind ${name}`, `${field}.kind: expected one of ${this.names().join(", ")}`);
    // The same TypeBox as Elysia's (one package, its ESM build): the string formats its route schemas use are
    // registered there. Imported when a change is first parsed: the registry is made with every server's context,
    // and the compiler's hundred-odd modules were evaluated before its first answer (issue 32, cold start).
    if (!entry.checker) {
      const { TypeCompiler } = await import("@sinclair/typebox/compiler");
      entry.checker ??= TypeCompiler.Compile(entry.kind.schema);
    }
    if (!entry.checker.Check(body)) {
      const problems: string[] = [];
      for (const e of entry.checker.Errors(body)) {
        const path = e.path.replace(/^\//, "").replace(/\/(\d+)(?=\/|$)/g, "[$1]").replace(/\//g, ".");
        problems.push(`${field}${path ? `.${path}` : ""}: ${e.message}`);
        if (problems.length >= MAX_ERRORS) break;
      }
      throw validation(`The ${name} change is not valid`, problems.join("; "));
    }
    return { kind: entry.kind, body, change: { kind: name, ...body } };
  }

  /** A stored change's kind and body (NOT_FOUND when its kind is no longer registered). */
  of(change: StoredChange): ParsedChange {
    const { kind: name, ...body } = change;
    const entry = this.kinds.get(name);
    if (!entry) throw notFound(`Unknown change kind ${name}`);
    return { kind: entry.kind, body, change };
  }

  /**
   * THE APPROVAL HOOK. Change requests (issue 30) install the check that an env requiring approval has the
   * change approved ahead; until then no env requires approval and every change passes.
   */
  setApprovalCheck(check: ApprovalCheck): void {
    this.approvalCheck = check;
  }

  /** Asks the approval hook; throws (FORBIDDEN or VALIDATION, the hook's choice) when the change needs an approval it lacks. */
  requireApproval(input: Parameters<ApprovalCheck>[0]): Promise<void> {
    return this.approvalCheck(input);
  }

  /** Installed with the approval check: how a holder gives back what it held. */
  setApprovalRelease(release: ApprovalRelease): void {
    this.approvalRelease = release;
  }

  /** Gives back the approvals `holder` took (phase `hold`) and did not use up; nothing when it took none. */
  releaseApprovals(input: Parameters<ApprovalRelease>[0]): Promise<void> {
    return this.approvalRelease(input);
  }
}

/** Thrown to roll a dry run back; never leaves dryRun. */
const DRY_RUN = Symbol("dry run");

/**
 * Runs `fn` (applies of changes, in order) in one write transaction that is always rolled back: the
 * modules' own checks run exactly as a real publish would run them (references, schema, costs, the state
 * left by the earlier changes of a ramp), and nothing is kept or announced. Call it outside a transaction.
 */
export async function dryRun(store: Pick<Store, "write">, fn: () => Promise<void>): Promise<void> {
  try {
    await store.write(async () => {
      await fn();
      throw DRY_RUN;
    });
  } catch (err) {
    if (err !== DRY_RUN) throw err;
  }
}

/**
 * A creation's fingerprint (`killswitch.create`, …): `absent` while `find` answers NOT_FOUND, `exists` once it finds
 * one, so that a request to create a name someone took meanwhile goes stale.
 */
export async function absence(find: () => Promise<unknown>): Promise<string> {
  try {
    await find();
    return "exists";
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return "absent";
    throw err;
  }
}
