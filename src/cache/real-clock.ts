import { steadyEpochMs } from '../time/clock';

/**
 * The clock of the result cache: milliseconds since the epoch, read as the process's start
 * instant plus the monotonic `performance.now()`. It never goes back and never jumps when the
 * system date is set or an NTP step lands, so a result's age, its lifetime and the warming
 * interval are real elapsed time; and it stays comparable across processes (a shared Redis store)
 * as far as their system clocks agree. Pass your own (`cacheClock`) to drive the cache in tests.
 *
 * @example
 * let t = Date.parse('2026-11-21T12:00:00Z');
 * const ep = await createEndpoints({ sources, cacheClock: () => t, scheduler });
 * t += 300_000; // five minutes later, as far as the cache is concerned
 */
export type CacheClock = () => number;

/** The default `CacheClock`: wall time at process start, advanced by the monotonic clock. */
export const realClock: CacheClock = steadyEpochMs;
