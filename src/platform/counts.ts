/** How many of something each key holds (requests, streams, calls out), with none kept for a key at zero. */
export class KeyedCounts {
  private readonly counts = new Map<string, number>();
  private sum = 0;

  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  add(key: string): void {
    this.counts.set(key, this.of(key) + 1);
    this.sum++;
  }

  remove(key: string): void {
    const left = this.of(key) - 1;
    if (left <= 0) this.counts.delete(key);
    else this.counts.set(key, left);
    this.sum--;
  }

  /** All keys together. */
  get total(): number {
    return this.sum;
  }
}
