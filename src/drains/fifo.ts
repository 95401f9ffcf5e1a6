/**
 * A first-in first-out list whose removals from the front cost O(1): a drain's backlog drops
 * its oldest events one by one while a receiver is down, and `Array.prototype.shift` moved the
 * whole backlog each time (ingest ran three times slower behind a down drain).
 *
 * @example
 * const fifo = new Fifo<number>();
 * fifo.push(1); fifo.push(2); fifo.shift(); // 1
 */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined as T;
    this.compact();
    return item;
  }

  /** Up to `count` of the oldest items, removed. */
  take(count: number): T[] {
    const taken = this.items.slice(this.head, this.head + count);
    this.head += taken.length;
    this.compact();
    return taken;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }

  /** Gives the removed slots back once they are half of the array (amortised O(1) per item). */
  private compact(): void {
    if (this.head === this.items.length) this.clear();
    else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
