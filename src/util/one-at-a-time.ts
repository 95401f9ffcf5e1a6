/**
 * Runs pieces of work one after another, in the order they ask: a lane. Why: each background
 * compaction opens a DuckDB with its own memory limit, and nine sources compacting at once would
 * hold nine of them; through one lane the process holds one, inside its memory budget.
 *
 * @example
 * const lane = oneAtATime();
 * await Promise.all([lane(() => compact('edge_logs')), lane(() => compact('auth_logs'))]); // one, then the other
 */
export function oneAtATime(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    // The next work waits for this one to settle, whether it succeeded or not.
    tail = run.catch(() => undefined);
    return run;
  };
}
