import { ENVS, type Env, isEnv } from "../../../lib/envs";
import { unavailable } from "../../../lib/errors";
import type { Logger } from "../../../lib/log";
import { type Snapshot, type SnapshotEntry, type SnapshotListener, type SnapshotSource, prepareEntry } from "../../delivery/snapshot";
import { SnapshotListeners } from "../../delivery/snapshot-listeners";
import type { RelayDisk } from "./disk";

/** Reconnect delays after a stream ends: doubled from the first up to the last, with jitter. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
/** A stream silent this long is taken as dead (the upstream sends a comment every 15 s). */
export const STREAM_IDLE_MS = 45_000;

/**
 * The relay's snapshots: what the SDK routes (src/modules/delivery, mounted unchanged on the relay) read
 * instead of the store. Each env's entry is built from the upstream stream's event JSON with the upstream's
 * own `prepareEntry`, so bodies, ETags and stream event ids are the upstream's. Every new entry is saved to
 * disk; a relay started while its upstream is away serves the saved ones, marked stale.
 */
export class RelaySnapshots implements SnapshotSource {
  private readonly entries = new Map<string, SnapshotEntry>();
  private readonly listeners = new SnapshotListeners<SnapshotEntry>();
  /** Envs whose upstream stream is open now. */
  private readonly live = new Set<Env>();
  /** Since when the relay has not heard its upstream (epoch ms); undefined while every stream is open. */
  private lostSince: number | undefined;
  /** Whether the upstream itself answered as a stale relay (a chain whose far end is away). */
  private upstreamStale = new Set<Env>();
  projectId: string | undefined;
  defaultEnvValue: Env = "prod";

  constructor(
    private readonly disk: RelayDisk,
    private readonly log: Logger,
  ) {}

  /** Loads the snapshots saved by the last run: served stale until the upstream is heard. */
  loadFromDisk(projectId: string): void {
    this.projectId = projectId;
    let oldest: number | undefined;
    for (const saved of this.disk.snapshots()) {
      try {
        const snapshot = JSON.parse(saved.json) as Snapshot;
        if (snapshot.projectId !== projectId || !isEnv(saved.env)) continue;
        this.entries.set(`${projectId}/${saved.env}`, prepareEntry(snapshot, saved.json));
        oldest = Math.min(oldest ?? saved.savedAt, saved.savedAt);
      } catch (err) {
        this.log.warn("relay: a saved snapshot could not be read; it is fetched again from the upstream", { env: saved.env, error: String(err) });
      }
    }
    this.lostSince = oldest ?? Date.now();
  }

  // --- SnapshotSource (what the delivery routes ask) ---

  cached(projectId: string, env: Env): SnapshotEntry | undefined {
    return this.entries.get(`${projectId}/${env}`);
  }

  cachedByKey(key: string): SnapshotEntry | undefined {
    return this.entries.get(key);
  }

  async get(projectId: string, env: Env): Promise<SnapshotEntry> {
    const entry = this.entries.get(`${projectId}/${env}`);
    // Nothing from the upstream yet, and nothing on disk: the caller retries shortly.
    if (!entry) throw unavailable(2);
    return entry;
  }

  cachedDefaultEnv(_projectId: string): Env | undefined {
    return this.defaultEnvValue;
  }

  async defaultEnv(_projectId: string): Promise<Env> {
    return this.defaultEnvValue;
  }

  subscribe(projectId: string, env: Env, listener: SnapshotListener): () => void {
    return this.listeners.subscribe(`${projectId}/${env}`, listener);
  }

  listenerCount(): number {
    return this.listeners.count();
  }

  // --- following the upstream ---

  /** Takes one snapshot event's JSON from the upstream; true when it changed what the relay serves. */
  accept(env: Env, json: string): boolean {
    const snapshot = JSON.parse(json) as Snapshot;
    if (snapshot.projectId !== this.projectId || snapshot.env !== env) {
      this.log.warn("relay: the upstream sent a snapshot of another project or env; ignored", { env, projectId: snapshot.projectId });
      return false;
    }
    const key = `${snapshot.projectId}/${env}`;
    const current = this.entries.get(key);
    // A restored upstream starts another epoch: its revisions count afresh, so any change of epoch is news.
    if (current && current.snapshot.epoch === snapshot.epoch && current.snapshot.revision >= snapshot.revision) return false;
    const entry = prepareEntry(snapshot, json);
    this.entries.set(key, entry);
    try {
      this.disk.saveSnapshot(env, json, Date.now());
    } catch (err) {
      this.log.warn("relay: saving a snapshot to disk failed; it is served from memory", { env, error: String(err) });
    }
    this.listeners.deliver(key, entry, (err) => this.log.error("relay: snapshot listener failed", { env, error: String(err) }));
    return true;
  }

  connected(env: Env, upstreamStale: boolean): void {
    this.live.add(env);
    if (upstreamStale) this.upstreamStale.add(env);
    else this.upstreamStale.delete(env);
    if (this.live.size === ENVS.length && this.upstreamStale.size === 0) this.lostSince = undefined;
  }

  disconnected(env: Env): void {
    this.live.delete(env);
    this.lostSince ??= Date.now();
  }

  /** Every env's stream open (the relay follows its upstream live). */
  isLive(): boolean {
    return this.lostSince === undefined;
  }

  /** Whole seconds the relay has served without hearing its upstream; undefined while live. */
  staleSeconds(now = Date.now()): number | undefined {
    return this.lostSince === undefined ? undefined : Math.max(0, Math.floor((now - this.lostSince) / 1000));
  }

  /** Age of the oldest snapshot served, from its publish-independent save time: for /metrics. */
  envsLive(): number {
    return this.live.size;
  }

  hasAny(): boolean {
    return this.entries.size > 0;
  }

  /** Revision per env served now (for /healthz). */
  revisions(): Partial<Record<Env, number>> {
    const out: Partial<Record<Env, number>> = {};
    for (const env of ENVS) {
      const entry = this.projectId ? this.entries.get(`${this.projectId}/${env}`) : undefined;
      if (entry) out[env] = entry.snapshot.revision;
    }
    return out;
  }

  close(): void {
    this.listeners.clear();
  }
}

/**
 * Follows one env's stream on the upstream (`GET /api/sdk/v1/stream?env=…` with the relay's key) until
 * `signal` aborts, reconnecting with backoff whenever it ends.
 */
export async function followEnv(input: {
  upstream: string;
  key: string;
  env: Env;
  snapshots: RelaySnapshots;
  signal: AbortSignal;
  log: Logger;
  idleMs?: number;
  onChange?: () => void;
  /** The relay's X-Svc-Relay header (the upstream lists the relay while its streams are open). */
  hello?: Record<string, string>;
}): Promise<void> {
  const { upstream, key, env, snapshots, signal, log } = input;
  const idleMs = input.idleMs ?? STREAM_IDLE_MS;
  let delay = RECONNECT_MIN_MS;
  let reported = false;
  while (!signal.aborted) {
    const attempt = new AbortController();
    const onAbort = () => attempt.abort();
    signal.addEventListener("abort", onAbort);
    let idle: Timer | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => attempt.abort(), idleMs);
    };
    try {
      touch();
      // No Last-Event-ID: the upstream then opens with its current snapshot, which is also what tells the relay
      // the stream is live (a stream that skips it says nothing until its first heartbeat, 15 s later).
      const res = await fetch(`${upstream}/api/sdk/v1/stream?env=${env}`, {
        headers: { ...input.hello, "x-sdk-key": key, accept: "text/event-stream" },
        signal: attempt.signal,
        // A stream gets a connection of its own: a pooled one may be a dead upstream's, and hang.
        keepalive: false,
      });
      if (res.status !== 200 || !res.body) {
        const text = await res.text().catch(() => "");
        throw new Error(`the upstream answered ${res.status} ${text.slice(0, 200)}`);
      }
      snapshots.connected(env, res.headers.has("x-svc-stale"));
      input.onChange?.();
      if (reported) log.info("relay: following the upstream again", { env });
      reported = false;
      delay = RECONNECT_MIN_MS;
      const decoder = new TextDecoder();
      let buffer = "";
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        touch();
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) event = line.slice(6).trim();
            else if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(line.startsWith("data: ") ? 6 : 5);
          }
          if (event === "snapshot" && data) {
            try {
              if (snapshots.accept(env, data)) input.onChange?.();
            } catch (err) {
              log.warn("relay: a snapshot event could not be read", { env, error: String(err) });
            }
          }
        }
      }
      throw new Error("the upstream closed the stream");
    } catch (err) {
      if (signal.aborted) break;
      if (!reported) log.warn("relay: lost the upstream stream; serving the last snapshot, marked stale, and reconnecting", { env, error: String(err) });
      reported = true;
    } finally {
      clearTimeout(idle);
      signal.removeEventListener("abort", onAbort);
      snapshots.disconnected(env);
    }
    input.onChange?.();
    await Bun.sleep(delay * (0.5 + Math.random() / 2));
    delay = Math.min(RECONNECT_MAX_MS, delay * 2);
  }
}
