import { EngineError } from '../errors';

export interface QueryGateLimits {
  /** Queries running at once. */
  maxConcurrent: number;
  /** Queries waiting for a slot; one more is refused with `overloaded`. */
  maxQueued: number;
  /**
   * Failures that may pass once the task runs alone (DuckDB out of its memory limit while other
   * queries held memory): such a task runs again, by itself, before its caller sees the error.
   */
  retryAloneWhen?: (error: unknown) => boolean;
}

/**
 * A counting semaphore with a bounded FIFO queue. Past the queue bound a caller is refused at
 * once (503 `overloaded`) instead of piling up latency and memory behind a slow engine.
 *
 * A task that failed in a way `retryAloneWhen` names, while other tasks ran beside it, runs once
 * more alone: new tasks wait until it has run, so under a memory limit a burst of queries turns
 * into latency instead of out-of-memory failures. A task that fails alone fails for good.
 */
export class QueryGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Tasks waiting to run alone; while any wait or run, no other task starts. */
  private readonly lone: Array<() => void> = [];
  private aloneRunning = false;
  /** Counts starts, so a task can tell whether another started while it ran. */
  private starts = 0;

  constructor(private readonly limits: QueryGateLimits) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    const startedAs = ++this.starts;
    const company = this.running > 1;
    try {
      return await task();
    } catch (error) {
      // Shared: others were running when it started, or started while it ran.
      const shared = company || this.starts !== startedAs;
      if (!shared || !this.limits.retryAloneWhen?.(error)) throw error;
    } finally {
      this.release();
    }
    return this.runAlone(task);
  }

  get load(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting.length + this.lone.length };
  }

  private async runAlone<T>(task: () => Promise<T>): Promise<T> {
    await new Promise<void>((resolve) => {
      this.lone.push(resolve);
      this.pump();
    });
    try {
      return await task();
    } finally {
      this.aloneRunning = false;
      this.running--;
      this.pump();
    }
  }

  private acquire(): Promise<void> {
    if (!this.blocked() && this.running < this.limits.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.maxQueued) {
      return Promise.reject(new EngineError('overloaded', 'Too many queries are waiting; retry shortly.', { retryAfterSeconds: 1 }));
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    this.running--;
    this.pump();
  }

  private blocked(): boolean {
    return this.aloneRunning || this.lone.length > 0;
  }

  /** Starts what may start: a lone task once nothing runs, else waiters up to the bound. */
  private pump(): void {
    if (this.aloneRunning) return;
    if (this.lone.length) {
      if (this.running === 0) {
        this.aloneRunning = true;
        this.running++;
        this.lone.shift()!();
      }
      return;
    }
    while (this.running < this.limits.maxConcurrent && this.waiting.length) {
      this.running++;
      this.waiting.shift()!();
    }
  }
}
