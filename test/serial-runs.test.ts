import { describe, expect, it } from 'vitest';
import { SerialRuns } from '../src/util/serial-runs';

/** A run that waits until the test lets it finish. */
function gatedRuns(result: () => boolean | void = () => undefined) {
  const gates: Array<() => void> = [];
  let started = 0;
  let concurrent = 0;
  let maxConcurrent = 0;
  const runs = new SerialRuns(async () => {
    started++;
    concurrent++;
    maxConcurrent = Math.max(maxConcurrent, concurrent);
    await new Promise<void>((resolve) => gates.push(resolve));
    concurrent--;
    return result();
  });
  const release = async () => {
    while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
    gates.shift()!();
  };
  return { runs, release, started: () => started, maxConcurrent: () => maxConcurrent };
}

describe('SerialRuns: background work one run at a time, on demand', () => {
  it('triggers during a run ask for exactly one more run after it, never a second at once', async () => {
    const t = gatedRuns();
    t.runs.trigger();
    t.runs.trigger();
    t.runs.trigger();
    await t.release();
    await t.release();
    await t.runs.settled();
    expect(t.started()).toBe(2);
    expect(t.maxConcurrent()).toBe(1);
  });

  it('a run that returns false ends the series though more was asked for', async () => {
    const t = gatedRuns(() => false);
    t.runs.trigger();
    t.runs.trigger();
    await t.release();
    await t.runs.settled();
    expect(t.started()).toBe(1);
  });

  it('while paused a trigger starts nothing; after stop nothing starts at all', async () => {
    let paused = true;
    let started = 0;
    const runs = new SerialRuns(
      async () => {
        started++;
      },
      () => paused,
    );
    runs.trigger();
    await runs.settled();
    expect(started).toBe(0);
    paused = false;
    runs.trigger();
    await runs.settled();
    expect(started).toBe(1);
    await runs.stop();
    runs.trigger();
    await runs.settled();
    expect(started).toBe(1);
    expect(runs.stopped).toBe(true);
  });
});
