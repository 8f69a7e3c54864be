/**
 * Who listens for new snapshot entries, per (project, env) key: the SSE streams of this server, and those of an
 * edge relay (src/modules/relays/edge/snapshots.ts), which hold the same kind of entry.
 */
export class SnapshotListeners<Entry> {
  private readonly byKey = new Map<string, Set<(entry: Entry) => void>>();

  /** Hears every new entry of `key` from now on. Returns the unsubscribe. */
  subscribe(key: string, listener: (entry: Entry) => void): () => void {
    let set = this.byKey.get(key);
    if (!set) this.byKey.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.byKey.get(key) === set) this.byKey.delete(key);
    };
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /**
   * Hands `entry` to every listener of `key`; one that throws is reported and does not stop the others.
   * Answers how many listened.
   */
  deliver(key: string, entry: Entry, failed: (err: unknown) => void): number {
    const set = this.byKey.get(key);
    if (!set) return 0;
    for (const listener of set) {
      try {
        listener(entry);
      } catch (err) {
        failed(err);
      }
    }
    return set.size;
  }

  /** Live subscriptions (open streams), for tests and metrics. */
  count(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  clear(): void {
    this.byKey.clear();
  }
}
