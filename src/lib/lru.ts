/**
 * A bounded map that forgets the least recently used entry first. A read
 * moves its entry to the young end (Map keeps insertion order), so entries
 * in steady use survive a flood of one-off keys (an attacker trying random
 * secrets cannot push every real key out at once).
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  /** Removes every entry `drop` says yes to. */
  deleteWhere(drop: (value: V, key: K) => boolean): void {
    for (const [key, value] of this.map) if (drop(value, key)) this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}
