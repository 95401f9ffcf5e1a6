import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMarkerLine } from '../src/wal-format/commit-marker';
import { InvalidOptionError } from '../src/errors';
import { GroupCommit, writeGroup } from '../src/managed/wal/group-commit';
import { Wal } from '../src/managed/wal/wal';
import { createSegment, SegmentRolling } from '../src/managed/wal/segment-rolling';
import { tempDir } from './support/log-files';

const tmp = tempDir('le-wal-rooms-');
afterAll(() => tmp.cleanup());

const bytes = (text: string) => Buffer.from(text);

/** A commit step the test releases by hand, recording each group it is given. */
function heldCommits() {
  const groups: string[][] = [];
  const releases: Array<(error?: Error) => void> = [];
  const commit = (group: readonly Uint8Array[]) => {
    groups.push(group.map((g) => Buffer.from(g).toString()));
    return new Promise<number>((resolve, reject) => releases.push((error) => (error ? reject(error) : resolve(groups.length))));
  };
  return { groups, releases, commit };
}

describe("group commit (the WAL's batching of appends)", () => {
  it('appends made in the same turn are one group; appends made while it is written are the next', async () => {
    const held = heldCommits();
    let after = 0;
    const gc = new GroupCommit({ wanted: () => false, beforeGroup: async () => {}, commit: held.commit, failure: (e) => e as Error, afterGroup: () => after++ });
    const first = [gc.enqueue(bytes('a\n')), gc.enqueue(bytes('b\n'))];
    expect(gc.pendingBytes).toBe(4);
    await new Promise((r) => setImmediate(r));
    await Promise.resolve();
    expect(held.groups).toEqual([['a\n', 'b\n']]);
    const second = gc.enqueue(bytes('c\n'));
    held.releases[0]!();
    expect(await Promise.all(first)).toEqual([1, 1]);
    while (held.releases.length < 2) await new Promise((r) => setImmediate(r));
    expect(held.groups[1]).toEqual(['c\n']);
    held.releases[1]!();
    expect(await second).toBe(2);
    await gc.running;
    expect(gc.pendingBytes).toBe(0);
    expect(after).toBe(2);
  });

  it('a failed group rejects every append in it with the error `failure` makes, and the next group goes on', async () => {
    const held = heldCommits();
    const gc = new GroupCommit({ wanted: () => false, beforeGroup: async () => {}, commit: held.commit, failure: () => new Error('as the caller sees it'), afterGroup: () => {} });
    const failing = [gc.enqueue(bytes('a\n')), gc.enqueue(bytes('b\n'))];
    while (!held.releases.length) await new Promise((r) => setImmediate(r));
    held.releases[0]!(new Error('disk'));
    for (const p of failing) await expect(p).rejects.toThrow('as the caller sees it');
    const next = gc.enqueue(bytes('c\n'));
    while (held.releases.length < 2) await new Promise((r) => setImmediate(r));
    held.releases[1]!();
    expect(await next).toBe(2);
  });

  it('writeGroup writes the group and its marker at the committed end, and counts them', async () => {
    const path = tmp.path('group');
    const handle = await open(path, 'w+');
    const target = { handle, committedBytes: 0, groups: 0 };
    const total = await writeGroup(target, [bytes('{"a":1}\n'), bytes('{"b":2}\n')], () => {
      throw new Error('not broken');
    });
    await handle.close();
    const text = readFileSync(path, 'utf8');
    expect(total).toBe(text.length);
    expect(target).toMatchObject({ committedBytes: text.length, groups: 1 });
    const lines = text.split('\n');
    expect(lines.slice(0, 2)).toEqual(['{"a":1}', '{"b":2}']);
    expect(parseMarkerLine(lines[2]!)).toMatchObject({ seq: 1, bytes: 16 });
  });
});

describe('rolling (when a WAL segment closes)', () => {
  function rollingIn(dir: string, maxSegmentBytes: number, quiet = { quietMs: 5000, quietRollBytes: 1_000_000 }) {
    let now = 0;
    const timers: Array<() => Promise<void>> = [];
    const delays = new Map<() => Promise<void>, number>();
    let asked = 0;
    const rolling = new SegmentRolling(
      {
        maxSegmentBytes,
        maxSegmentAgeMs: 1000,
        ...quiet,
        now: () => now,
        scheduler: { schedule: (ms, task) => (timers.push(task), delays.set(task, ms), () => timers.splice(timers.indexOf(task), 1)) },
      },
      (seq) => createSegment(dir, seq),
      () => asked++,
    );
    // A timer that fires is gone, as setTimeout's is.
    const fire = (task: () => Promise<void>) => (timers.splice(timers.indexOf(task), 1), task());
    return { rolling, timers, fire, delayOf: (task: () => Promise<void>) => delays.get(task), setNow: (t: number) => (now = t), asked: () => asked };
  }

  it('an empty segment is never due nor closed; its first group starts the age, the clock given says when it is old', async () => {
    const { rolling, timers, setNow, asked } = rollingIn(tmp.path('.'), 100);
    rolling.active = await createSegment(tmp.path('.'), 7);
    expect(rolling.active.path).toMatch(/00000000000000000007\.ndjson$/);
    setNow(5000);
    expect(rolling.due()).toBe(false);
    expect(await rolling.roll(() => expect.unreachable())).toBeNull();
    rolling.active.committedBytes = 10;
    rolling.written();
    expect(timers).toHaveLength(1);
    setNow(5999);
    expect(rolling.due()).toBe(false);
    setNow(6000);
    expect(rolling.due()).toBe(true);
    await timers[0]!();
    expect(asked()).toBe(1);
    await rolling.active.handle.close();
  });

  it('a segment holding quietRollBytes is due once no group came for quietMs; each group restarts the spell, and an early timer waits for the rest', async () => {
    const { rolling, timers, fire, delayOf, setNow, asked } = rollingIn(tmp.path('.'), 10_000, { quietMs: 50, quietRollBytes: 100 });
    rolling.active = await createSegment(tmp.path('.'), 3);
    rolling.active.committedBytes = 60;
    rolling.written();
    // Under quietRollBytes: the age timer alone; a quiet spell does not close it.
    expect(timers).toHaveLength(1);
    setNow(500);
    expect(rolling.due()).toBe(false);
    rolling.active.committedBytes = 120;
    rolling.written();
    expect(timers).toHaveLength(2);
    const quietTimer = timers[1]!;
    expect(delayOf(quietTimer)).toBe(50);
    // Ingest goes on: a group 30 ms later; when the timer fires 50 ms after the first, the segment
    // has been quiet 20 ms only, so it is not rolled and the timer waits the 30 ms left.
    setNow(530);
    rolling.written();
    expect(timers).toHaveLength(2);
    setNow(550);
    expect(rolling.due()).toBe(false);
    await fire(quietTimer);
    expect(asked()).toBe(0);
    expect(timers).toHaveLength(2);
    expect(delayOf(timers[1]!)).toBe(30);
    setNow(579);
    expect(rolling.due()).toBe(false);
    setNow(580);
    expect(rolling.due()).toBe(true);
    await fire(timers[1]!);
    expect(asked()).toBe(1);
    expect(timers).toHaveLength(1);
    // Rolled: the age timer goes with the segment, and the next (empty) segment has none.
    const closed = await rolling.roll(() => undefined);
    expect(closed).toMatchObject({ seq: 3, committedBytes: 120 });
    expect(timers).toHaveLength(0);
    expect(rolling.due()).toBe(false);
    await rolling.active.handle.close();
  });

  it('a full segment asks for the roll; the closed one is listed in the same turn as the next becomes active', async () => {
    const { rolling, timers } = rollingIn(tmp.path('.'), 100);
    rolling.active = await createSegment(tmp.path('.'), 20);
    rolling.active.committedBytes = 100;
    rolling.written();
    rolling.checkSize();
    expect(rolling.requested).toBe(true);
    const listed: number[] = [];
    const closed = await rolling.roll((segment) => listed.push(rolling.active!.seq, segment.seq));
    expect(listed).toEqual([21, 20]);
    expect(closed).toMatchObject({ seq: 20, committedBytes: 100, closed: true });
    expect(rolling.requested).toBe(false);
    expect(timers).toHaveLength(0);
    await rolling.active!.handle.close();
  });
});

describe('the options of a WAL', () => {
  it('a bound that is not a positive number is an InvalidOptionError naming it, never a RangeError', async () => {
    for (const [option, value] of [
      ['maxSegmentBytes', 0],
      ['maxSegmentAgeMs', -1],
      ['maxPendingBytes', Number.NaN],
      ['maxUncompactedBytes', Number.POSITIVE_INFINITY],
      ['segmentQuietMs', 0],
      ['quietRollBytes', -1],
    ] as const) {
      const refused = await Wal.open({ dir: tmp.path(`options-${option}`), [option]: value }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(InvalidOptionError);
      expect(refused).toMatchObject({ code: 'invalid_option', option, message: expect.stringContaining(`${option} must be a positive number of`) });
    }
  });
});
