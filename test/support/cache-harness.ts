import { createEndpoints, EngineError, memoryCache, type CacheScheduler, type Engine, type EndpointsOptions, type CompiledQuery, type EngineResult, type ResultCache } from '../../src/index';

/**
 * A cache clock and a scheduler the test moves by hand (the `cacheClock` and `scheduler` options):
 * `advance` walks time forward, running every warming task that falls due (tasks due at the same
 * instant run concurrently, as timers of two instances would) and waits for each to finish, so no
 * test depends on real elapsed time. The windows' `now` is a separate clock the tests keep fixed.
 */
export function manualTime(startIso: string) {
  let t = Date.parse(startIso);
  const tasks = new Set<{ at: number; task: () => Promise<void> }>();
  const scheduler: CacheScheduler = {
    schedule(delayMs, task) {
      const item = { at: t + Math.max(0, delayMs), task };
      tasks.add(item);
      return () => void tasks.delete(item);
    },
  };
  return {
    /** The cache clock: ms since the epoch. */
    clock: () => t,
    scheduler,
    /** Milliseconds since the start instant. */
    get elapsedMs() {
      return t - Date.parse(startIso);
    },
    /** Warming tasks waiting to run. */
    get pending() {
      return tasks.size;
    },
    async advance(ms: number): Promise<void> {
      const target = t + ms;
      for (let guard = 0; ; guard++) {
        if (guard > 10_000) throw new Error('warming keeps scheduling work at the same instant');
        let next = Number.POSITIVE_INFINITY;
        for (const item of tasks) next = Math.min(next, item.at);
        if (next > target) break;
        t = Math.max(t, next);
        const due = [...tasks].filter((item) => item.at <= t);
        for (const item of due) tasks.delete(item);
        await Promise.all(due.map((item) => item.task()));
      }
      t = target;
    },
  };
}

/**
 * An engine around another (or around nothing: empty answers) that counts runs, can fail them and
 * can hold them until released. Its `close` does nothing, so one DuckDB serves a whole test file.
 */
export class ProbeEngine implements Engine {
  runs = 0;
  /** Every request run, in order. */
  readonly requests: CompiledQuery[] = [];
  running = 0;
  maxRunning = 0;
  /** When set, runs fail with `query_failed` (after being counted). */
  failing = false;
  private hold: { promise: Promise<void>; release: () => void } | null = null;
  private waiters: Array<() => void> = [];

  constructor(private readonly inner: Engine | null = null) {}

  get target(): Engine['target'] {
    return this.inner?.target ?? { dialect: 'duckdb' };
  }

  /** Runs started from now on wait until `release()`. */
  holdRuns(): void {
    let release!: () => void;
    const promise = new Promise<void>((resolve) => (release = resolve));
    this.hold = { promise, release };
  }

  release(): void {
    this.hold?.release();
    this.hold = null;
  }

  /** Resolves once `n` runs are in progress at the same time. */
  async untilRunning(n: number): Promise<void> {
    while (this.running < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  async run(request: CompiledQuery): Promise<EngineResult> {
    this.runs++;
    this.requests.push(request);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    for (const wake of this.waiters.splice(0)) wake();
    try {
      if (this.hold) await this.hold.promise;
      if (this.failing) throw new EngineError('query_failed', 'The query failed in the engine.');
      return this.inner ? await this.inner.run(request) : { rows: [], engineMs: 0 };
    } finally {
      this.running--;
    }
  }

  checkPattern(pattern: string) {
    return this.inner ? this.inner.checkPattern(pattern) : Promise.resolve(null);
  }

  ping() {
    return this.inner ? this.inner.ping() : Promise.resolve();
  }

  inspectSources() {
    return this.inner ? this.inner.inspectSources() : Promise.resolve([]);
  }

  async close() {}
}

/** Lets every pending callback and I/O-free continuation run. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Endpoints over `inner` (through a counting ProbeEngine), with their own memory cache, a manual
 * cache clock and scheduler starting at `startIso`, and windows placed at a replayed, fixed `now`
 * (`startIso` too): everything the cache does must then follow the cache clock alone.
 */
export async function cachedEndpoints(startIso: string, inner: Engine | null, extra: Partial<EndpointsOptions> = {}) {
  const time = manualTime(startIso);
  const probe = new ProbeEngine(inner);
  const store = memoryCache({ clock: time.clock });
  const fixed = new Date(startIso);
  const ep = await createEndpoints({
    sources: {},
    engine: probe,
    now: () => fixed,
    cacheClock: time.clock,
    scheduler: time.scheduler,
    cache: store,
    ...extra,
  });
  return { ep, time, probe, store };
}

/**
 * A store whose operations can be made to hang (never settle) or fail, one switch per method,
 * around a real memory cache: what a Redis that went away looks like to the endpoints.
 */
export function flakyStore(inner = memoryCache()) {
  const mode: Record<'get' | 'set' | 'delete' | 'tryLock', 'ok' | 'hang' | 'fail'> = { get: 'ok', set: 'ok', delete: 'ok', tryLock: 'ok' };
  const hung: Array<() => void> = [];
  const gate = <T>(method: keyof typeof mode, call: () => Promise<T>): Promise<T> => {
    if (mode[method] === 'fail') return Promise.reject(new Error('store down'));
    if (mode[method] === 'hang') return new Promise<T>((resolve) => hung.push(() => void call().then(resolve)));
    return call();
  };
  let locksHeld = 0;
  let locksTaken = 0;
  const store: ResultCache = {
    get: (key) => gate('get', () => inner.get(key)),
    set: (key, value, ttl) => gate('set', () => inner.set(key, value, ttl)),
    delete: (key) => gate('delete', () => inner.delete(key)),
    tryLock: () =>
      gate('tryLock', async () => {
        locksHeld++;
        locksTaken++;
        return { release: async () => void locksHeld-- };
      }),
  };
  return {
    store,
    inner,
    mode,
    /** Operations waiting on a hung method. */
    get hung() {
      return hung.length;
    },
    /** Locks handed out and not released. */
    get locksHeld() {
      return locksHeld;
    },
    /** Locks handed out in all. */
    get locksTaken() {
      return locksTaken;
    },
    /** Lets every hung operation finish now (what a Redis coming back does). */
    recover(): void {
      for (const key of Object.keys(mode) as Array<keyof typeof mode>) mode[key] = 'ok';
      hung.splice(0).forEach((finish) => finish());
    },
  };
}
