/**
 * The one place the product reads the system's clocks (test/clock-reads.test.ts fails on a read
 * anywhere else under src/, the browser page aside).
 *
 * What places a window or judges the age of events (query windows, retention, arrival times of
 * ingested events) never reads these directly: it takes the injected clock (option `now`, CLI
 * `--now`), whose default is `systemNow`. What these serve directly is time of the machine's own
 * doing: how old a file or a lock on this disk is, how long a query ran, log lines' stamps.
 *
 * @example
 * const now = options.now ?? systemNow;
 */

/** The system's date and time. */
export const systemNow = (): Date => new Date();

/** The system's time, in milliseconds since the epoch (file ages: compared with `mtimeMs`). */
export const systemMs = (): number => Date.now();

/** Monotonic milliseconds from an arbitrary origin: durations, leases, timeouts. */
export const monotonicMs = (): number => performance.now();

/**
 * Milliseconds since the epoch that never go back and never jump when the system date is set:
 * the wall time at process start advanced by the monotonic clock (the result cache's clock).
 */
export const steadyEpochMs = (): number => performance.timeOrigin + performance.now();
