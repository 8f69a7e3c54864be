import { ENVS, type Env } from "../../lib/envs";
import { notFound } from "../../lib/errors";
import type { ServiceContext } from "../../lib/module";
import { emitEvent } from "../../lib/outbox";
import { isBusyError, isPostgresUnavailable } from "../../lib/store";
import { type PublishedRollout } from "../../sdk/rollouts";
import { indexOverrides } from "../../sdk/experiments";
import type { Snapshot } from "../delivery/snapshot";
import { EvaluationRecorder } from "./recorder";
import { configIsUniform, gateIsUniform, killswitchIsUniform } from "./stale";
import { addCounts, claimDigest, dailyCounts, lastEvaluations, pruneCounts } from "./store";
import {
  BATCH_NAMES_MAX,
  type CountRow,
  DAY_MS,
  DEFAULT_DIGEST_CHECK_MS,
  DEFAULT_USAGE_FLUSH_MS,
  DIGEST_EVERY_DAYS,
  DIGEST_FLAGS_MAX,
  type FlagUsage,
  KEEP_DAYS,
  type StaleFlag,
  type StaleReason,
  USAGE_DAYS,
  utcDay,
} from "./types";

/** The longest a flag name can be (every kind's NAME_MAX is 128; sub-switch keys are counted for their killswitch). */
const NAME_MAX = 256;

/**
 * Evaluation counts and stale flags (issue 30). Counts are held in memory (EvaluationRecorder) and written
 * every few seconds and at shutdown, one atomic upsert-add per (project, flag, env, day); the stale list is
 * read from the flags' published state (through their services) and the counts; a weekly digest per project
 * goes to connectors as the outbox event `flags.stale_digest`.
 */
export class UsageService {
  readonly recorder: EvaluationRecorder;
  private readonly flushTimer: ReturnType<typeof setInterval>;
  private readonly digestTimer: ReturnType<typeof setInterval>;
  private flushing: Promise<void> | null = null;
  private lastPrune = 0;

  constructor(private readonly ctx: ServiceContext) {
    this.recorder = new EvaluationRecorder(() => this.now());
    this.flushTimer = setInterval(() => void this.flush(), ctx.options.usageFlushMs ?? DEFAULT_USAGE_FLUSH_MS);
    this.flushTimer.unref?.();
    this.digestTimer = setInterval(() => void this.sendDigests().catch((err) => ctx.log.error("stale digest failed", { error: String(err) })), ctx.options.staleDigestCheckMs ?? DEFAULT_DIGEST_CHECK_MS);
    this.digestTimer.unref?.();
  }

  /** Epoch ms: the injected clock of tests, else the wall clock. */
  now(): number {
    return this.ctx.options.clock?.() ?? Date.now();
  }

  /**
   * An SDK's batch (`POST /api/sdk/v1/evaluations`): names the env's snapshot has are counted, others
   * ignored (so hostile names never reach the table).
   */
  async ingest(projectId: string, env: Env, counts: Record<string, number>): Promise<{ accepted: number; ignored: number }> {
    const snapshot = (await this.ctx.services.snapshots.get(projectId, env)).snapshot as Snapshot;
    let accepted = 0;
    let ignored = 0;
    for (const name of Object.keys(counts).slice(0, BATCH_NAMES_MAX)) {
      const n = counts[name]!;
      if (name.length > NAME_MAX || !Number.isSafeInteger(n) || n < 1) {
        ignored++;
        continue;
      }
      const known = Object.hasOwn(snapshot.killswitches, name) || Object.hasOwn(snapshot.gates, name) || Object.hasOwn(snapshot.configs, name) || Object.hasOwn(snapshot.experiments ?? {}, name);
      if (!known) {
        ignored++;
        continue;
      }
      this.recorder.counter.add(projectId, env, name, n);
      accepted++;
    }
    return { accepted, ignored };
  }

  /** Writes what was counted; one flush at a time. A passing failure keeps the counts for the next. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => this.flush());
    const rows = this.recorder.counter.take();
    if (rows.length === 0) return Promise.resolve();
    this.flushing = this.write(rows).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async write(rows: CountRow[]): Promise<void> {
    try {
      await this.ctx.store.write((tx) => addCounts(tx, rows));
    } catch (err) {
      if (isBusyError(err) || isPostgresUnavailable(err)) {
        this.recorder.counter.restore(rows);
        this.ctx.log.warn("writing evaluation counts failed; kept for the next flush", { rows: rows.length, error: String(err) });
        return;
      }
      // A project deleted since (its rows may not be added): write the others one by one.
      let dropped = 0;
      for (const row of rows) {
        try {
          await this.ctx.store.write((tx) => addCounts(tx, [row]));
        } catch {
          dropped++;
        }
      }
      if (dropped > 0) this.ctx.log.warn("evaluation counts dropped", { rows: dropped, error: String(err) });
    }
  }

  /** Whether the project has a killswitch, gate, config or experiment of that name. */
  private async exists(projectId: string, name: string): Promise<boolean> {
    const { killswitches, gates, configs, experiments } = this.ctx.services;
    for (const service of [killswitches, gates, configs, experiments] as { get(p: string, n: string): Promise<unknown> }[]) {
      try {
        await service.get(projectId, name);
        return true;
      } catch (err) {
        if ((err as { code?: string }).code !== "NOT_FOUND") throw err;
      }
    }
    return false;
  }

  /** One flag's last evaluation per env and its daily counts over the last USAGE_DAYS days (one env, or all added). */
  async usage(projectId: string, name: string, env?: Env): Promise<FlagUsage> {
    if (!(await this.exists(projectId, name))) throw notFound(`No killswitch, gate, config or experiment named ${name}`, "name: a flag of this project");
    await this.flush();
    const now = this.now();
    const firstDay = utcDay(now - (USAGE_DAYS - 1) * DAY_MS);
    const byDay = new Map<string, number>();
    for (let i = USAGE_DAYS - 1; i >= 0; i--) byDay.set(utcDay(now - i * DAY_MS), 0);
    for (const r of await dailyCounts(this.ctx.store, projectId, name, firstDay)) {
      if (env && r.env !== env) continue;
      if (byDay.has(r.day)) byDay.set(r.day, byDay.get(r.day)! + r.count);
    }
    const lastEvaluatedAt = { dev: null, staging: null, prod: null } as Record<Env, string | null>;
    for (const r of await lastEvaluations(this.ctx.store, projectId)) if (r.flag === name) lastEvaluatedAt[r.env] = r.lastAt;
    const days = [...byDay].map(([day, count]) => ({ day, count }));
    return { name, env: env ?? null, days, total: days.reduce((sum, d) => sum + d.count, 0), lastEvaluatedAt };
  }

  /**
   * Stale flags of the project (one env, or all): a killswitch, gate or config is stale on an env when its
   * published state served one value to everyone since its last publish, N days ago or more (`one_value`;
   * a running rollout or an experiment overriding it serves two), or nobody evaluated it on that env for N
   * days while it is older than N days (`not_evaluated`). N is the project's `staleAfterDays`.
   */
  async stale(projectId: string, env?: Env): Promise<{ staleAfterDays: number; flags: StaleFlag[] }> {
    const { projects, killswitches, gates, configs, snapshots } = this.ctx.services;
    await this.flush();
    const staleAfterDays = (await projects.get(projectId)).staleAfterDays;
    const now = this.now();
    const cutoff = new Date(now - staleAfterDays * DAY_MS).toISOString();
    const last = new Map<string, string>();
    for (const r of await lastEvaluations(this.ctx.store, projectId)) last.set(`${r.env}\u0000${r.flag}`, r.lastAt);
    const envs = env ? [env] : ENVS;
    const [ks, gs, cs] = await Promise.all([killswitches.list(projectId), gates.list(projectId), configs.list(projectId)]);
    const flags: StaleFlag[] = [];
    for (const e of envs) {
      const snapshot = (await snapshots.get(projectId, e)).snapshot as Snapshot;
      const overrides = indexOverrides(snapshot.experiments as never);
      const rolled = new Set(Object.values((snapshot.rollouts ?? {}) as Record<string, PublishedRollout>).map((r) => `${r.kind}\u0000${r.name}`));
      const judge = (kind: StaleFlag["kind"], name: string, createdAt: string, changedAt: string, uniform: boolean) => {
        const reasons: StaleReason[] = [];
        if (uniform && changedAt <= cutoff) reasons.push("one_value");
        const lastEvaluatedAt = last.get(`${e}\u0000${name}`) ?? null;
        if (createdAt <= cutoff && (lastEvaluatedAt === null || lastEvaluatedAt <= cutoff)) reasons.push("not_evaluated");
        if (reasons.length > 0) flags.push({ name, kind, env: e, reasons, lastEvaluatedAt, lastChangedAt: changedAt });
      };
      for (const k of ks) judge("killswitch", k.name, k.createdAt, k.envs[e].updatedAt, killswitchIsUniform(k.envs[e]));
      for (const g of gs) judge("gate", g.name, g.createdAt, g.envs[e].updatedAt, gateIsUniform(g.envs[e].rules) && !rolled.has(`gate\u0000${g.name}`) && !overrides.gates.has(g.name));
      for (const c of cs) judge("config", c.name, c.createdAt, c.envs[e].updatedAt, configIsUniform(c.envs[e].rules) && !rolled.has(`config\u0000${c.name}`) && !overrides.configs.has(c.name));
    }
    flags.sort((a, b) => a.name.localeCompare(b.name) || a.kind.localeCompare(b.kind) || ENVS.indexOf(a.env) - ENVS.indexOf(b.env));
    return { staleAfterDays, flags };
  }

  /**
   * The weekly digest: each project with stale flags gets one `flags.stale_digest` event at most every
   * DIGEST_EVERY_DAYS days, claimed in the same transaction as the event (several servers: one wins).
   * Also drops daily rows past KEEP_DAYS, once a day per server. Answers the projects it sent one for.
   */
  async sendDigests(): Promise<string[]> {
    const now = this.now();
    if (now - this.lastPrune > DAY_MS) {
      this.lastPrune = now;
      await pruneCounts(this.ctx.store, utcDay(now - KEEP_DAYS * DAY_MS));
    }
    const sent: string[] = [];
    for (const { id } of await this.ctx.services.projects.listRetention()) {
      const { staleAfterDays, flags } = await this.stale(id);
      if (flags.length === 0) continue;
      const claimed = await this.ctx.store.write(async (tx) => {
        if (!(await claimDigest(tx, id, new Date(now).toISOString(), new Date(now - DIGEST_EVERY_DAYS * DAY_MS).toISOString()))) return false;
        await emitEvent(tx, { projectId: id, type: "flags.stale_digest", payload: { staleAfterDays, count: flags.length, flags: flags.slice(0, DIGEST_FLAGS_MAX), truncated: flags.length > DIGEST_FLAGS_MAX } });
        return true;
      });
      if (claimed) sent.push(id);
    }
    return sent;
  }

  async close(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.digestTimer);
    await this.flush().catch((err) => this.ctx.log.error("writing evaluation counts at shutdown failed", { error: String(err) }));
  }
}
