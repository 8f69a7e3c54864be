import type { KeyDirectory, SdkKeyInfo } from "../../../lib/auth";
import { unavailable } from "../../../lib/errors";
import { sha256Hex } from "../../../lib/ids";
import type { Logger } from "../../../lib/log";
import { LruCache } from "../../../lib/lru";
import type { RelayDisk } from "./disk";

/** How long an answer of the upstream about a key is trusted: a key revoked upstream stops working here within this. */
export const KEY_TTL_MS = 60_000;
/** An unknown or foreign key is asked about again after this (a key minted a moment ago works soon). */
const UNKNOWN_TTL_MS = 5_000;
const KEYS_IN_MEMORY = 10_000;
/** How long a key question to the upstream may take before the relay answers from what it knows. */
const ASK_TIMEOUT_MS = 3_000;

type Known = { info: SdkKeyInfo | null; until: number };

/** The upstream's answer about one key: its info, null (unknown, revoked or refused), or undefined (the upstream did not answer). */
export type KeyQuestion = (secret: string) => Promise<SdkKeyInfo | null | undefined>;

/**
 * The relay's key directory (the interface the Authenticator asks, src/lib/auth.ts): the relay cannot read
 * key hashes, so it asks its upstream (`GET /api/sdk/v1/key`) once per distinct key and trusts the answer
 * for KEY_TTL_MS. Only keys of the relay's own project are accepted. Accepted keys are kept on disk (by
 * SHA-256 of the secret), so a relay started while its upstream is away still accepts the keys it knew;
 * while the upstream is away, a key it knew stays accepted (revocations then wait for the upstream).
 */
export class RelayKeyDirectory implements KeyDirectory {
  private readonly memory = new LruCache<string, Known>(KEYS_IN_MEMORY);
  private readonly asking = new Map<string, Promise<SdkKeyInfo | null>>();

  constructor(
    private readonly deps: {
      disk: RelayDisk;
      ask: KeyQuestion;
      /** The relay's project (undefined until the relay knows its own key). */
      projectId: () => string | undefined;
      /** Whether the upstream is reachable now (its streams are connected): when not, known keys are answered without asking. */
      upstreamUp: () => boolean;
      log: Logger;
      ttlMs?: number;
    },
  ) {}

  cached(secret: string): SdkKeyInfo | null | undefined {
    const known = this.memory.get(sha256Hex(secret));
    if (known && known.until > Date.now()) return known.info;
    return undefined;
  }

  async resolve(secret: string): Promise<SdkKeyInfo | null> {
    const hash = sha256Hex(secret);
    const running = this.asking.get(hash);
    if (running) return running;
    const asked = this.lookUp(hash, secret).finally(() => this.asking.delete(hash));
    this.asking.set(hash, asked);
    return asked;
  }

  /** The upstream marks keys used when the relay asks about them and when forwarded requests reach it. */
  markUsed(_keyId: string): void {}

  private async lookUp(hash: string, secret: string): Promise<SdkKeyInfo | null> {
    const remembered = this.memory.get(hash)?.info ?? this.deps.disk.knownKey(hash);
    if (remembered && !this.deps.upstreamUp()) {
      // Answered from what the relay knew; asked again in the background, so a revocation lands once the upstream is back.
      void this.ask(hash, secret, remembered).catch(() => {});
      return this.ours(remembered);
    }
    return this.ask(hash, secret, remembered);
  }

  private async ask(hash: string, secret: string, remembered: SdkKeyInfo | undefined | null): Promise<SdkKeyInfo | null> {
    let answer: SdkKeyInfo | null | undefined;
    try {
      answer = await Promise.race([this.deps.ask(secret), Bun.sleep(ASK_TIMEOUT_MS).then(() => undefined)]);
    } catch (err) {
      this.deps.log.debug?.("relay: asking the upstream about a key failed", { error: String(err) });
      answer = undefined;
    }
    const now = Date.now();
    if (answer === undefined) {
      if (remembered) return this.ours(remembered);
      // Neither the upstream nor the disk knows it: the caller may retry shortly.
      throw unavailable(5);
    }
    if (answer === null || this.ours(answer) === null) {
      this.memory.set(hash, { info: null, until: now + UNKNOWN_TTL_MS });
      if (remembered) this.deps.disk.forgetKey(hash);
      return null;
    }
    this.memory.set(hash, { info: answer, until: now + (this.deps.ttlMs ?? KEY_TTL_MS) });
    this.deps.disk.rememberKey(hash, answer, now);
    return answer;
  }

  /** Only keys of the relay's project are accepted (an admin key is never one the relay takes). */
  private ours(info: SdkKeyInfo): SdkKeyInfo | null {
    const projectId = this.deps.projectId();
    return projectId !== undefined && info.projectId === projectId && info.type !== "admin" ? info : null;
  }
}
