/**
 * Group commit for statements issued once per event: a call made while a flush is running waits for the
 * next flush and goes with everything else that arrived meanwhile. At low rates every call is flushed
 * alone at once (no timer, no added latency); under load one statement carries many rows. Measured
 * here, a round trip to PostgreSQL costs more CPU (the write syscall on a busy machine) than the rows
 * themselves, so fewer, fuller statements are what lets the service keep up.
 */
export class Batcher<T> {
  private queue: Array<{ item: T; resolve: () => void; reject: (err: unknown) => void }> = [];
  private running = false;

  /**
   * `gatherMs`: how long the first call waits for others before a flush starts (0: one turn of the event loop).
   * Worth it only where nothing waits on the flush but the caller's own bookkeeping.
   */
  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly maxBatch = 500,
    private readonly gatherMs = 0,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        // One turn of the event loop (or gatherMs) lets the calls made meanwhile join the first flush.
        if (this.gatherMs > 0) setTimeout(() => void this.drain(), this.gatherMs);
        else setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        await this.flush(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.running = false;
  }
}
