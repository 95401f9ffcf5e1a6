import { EngineError } from '../errors';

export interface QueryGateLimits {
  /** Queries running at once. */
  maxConcurrent: number;
  /** Queries waiting for a slot; one more is refused with `overloaded`. */
  maxQueued: number;
}

/**
 * A counting semaphore with a bounded FIFO queue. Past the queue bound a caller is refused at
 * once (503 `overloaded`) instead of piling up latency and memory behind a slow engine.
 */
export class QueryGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limits: QueryGateLimits) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  get load(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting.length };
  }

  private acquire(): Promise<void> {
    if (this.running < this.limits.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.maxQueued) {
      return Promise.reject(
        new EngineError('overloaded', 'Too many queries are waiting; retry shortly.', { retryAfterSeconds: 1 }),
      );
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter, so `running` stays the same.
    if (next) next();
    else this.running--;
  }
}
