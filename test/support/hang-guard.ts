/**
 * How long one thing in a test (a spawned command, a wait for a line or a condition) may take
 * before the test calls it hung and fails. A hang guard, never a speed check: it sits far above
 * any run time, so the suite passes on a machine loaded many times over (CI runs it beside two
 * CPU burners) and still ends when something does hang. Whole tests and hooks get
 * `testTimeout` of vitest.config.ts, above this.
 */
export const HANG_MS = 5 * 60_000;

/**
 * Resolves once `done()` holds (an observable state, maybe asked of a server), checking every
 * `everyMs`; fails past `HANG_MS`.
 *
 * @example
 * await waitUntil(() => existsSync(marker));
 */
export async function waitUntil(done: () => boolean | Promise<boolean>, everyMs = 20): Promise<void> {
  const deadline = Date.now() + HANG_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${HANG_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
