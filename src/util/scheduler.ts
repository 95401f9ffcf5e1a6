/**
 * Runs cache-warming work later. The default uses `setTimeout`; tests (or an application with its
 * own event loop) can pass another to drive warming deterministically.
 *
 * @example
 * // A scheduler a test advances by hand, together with the cache clock it gives createEndpoints:
 * let t = Date.parse('2026-11-21T10:00:00Z');
 * const due: { at: number; task: () => Promise<void> }[] = [];
 * const scheduler: CacheScheduler = {
 *   schedule(delayMs, task) { const item = { at: t + delayMs, task }; due.push(item); return () => { due.splice(due.indexOf(item), 1) } },
 * };
 * const ep = await createEndpoints({ sources, cacheClock: () => t, scheduler });
 */
export interface CacheScheduler {
  /**
   * Runs `task` after `delayMs` milliseconds of the cache clock (`cacheClock`) and returns a function that
   * cancels it. The task never rejects; its promise settles when that piece of warming is done.
   */
  schedule(delayMs: number, task: () => Promise<void>): () => void;
}

/** setTimeout's longest delay; a later deadline is reached in several hops. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The default scheduler: `setTimeout`, `unref`ed so warming never keeps the process alive. */
export const timerScheduler: CacheScheduler = {
  schedule(delayMs, task) {
    const timer = setTimeout(() => void task(), Math.min(Math.max(0, delayMs), MAX_DELAY_MS));
    timer.unref();
    return () => clearTimeout(timer);
  },
};
