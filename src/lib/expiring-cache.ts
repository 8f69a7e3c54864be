/**
 * Answers of an async lookup, kept for `ttlMs` (at most `max` keys: full, it
 * starts over). The promise itself is kept, so callers asking at once share
 * one lookup. A lookup that fails is not kept: the next caller asks again.
 * For hot paths that would otherwise ask the store on every request (the
 * public intake's project settings and CORS origins); whoever changes what
 * was looked up calls `clear`.
 */
export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, { value: Promise<V>; until: number }>();

  constructor(
    private readonly lookup: (key: K) => Promise<V>,
    private readonly options: { ttlMs: number; max: number },
  ) {}

  get(key: K): Promise<V> {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.value;
    const value = this.lookup(key);
    if (this.entries.size >= this.options.max) this.entries.clear();
    this.entries.set(key, { value, until: now + this.options.ttlMs });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
