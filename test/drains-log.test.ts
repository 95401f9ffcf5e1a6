import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DrainLog, KEPT_DIR, type KeptSegment } from '../src/drains/drain-log';
import { CURSORS_DIR, readCursors } from '../src/drains/drain-cursors';
import type { KeptLog } from '../src/managed/segment-keeper';
import type { WalSegment } from '../src/managed/wal/recover-at-open';
import { segmentFileName } from '../src/managed/wal/segment-name';
import { markerLine } from '../src/wal-format/commit-marker';
import { InvalidOptionError } from '../src/errors';
import { tempDir } from './support/log-files';

/** A segment's bytes as the WAL writes them: each group of events followed by its commit marker, and a blank line (damage set aside). */
function segmentBytes(ids: string[][]): string {
  return ids.map((group, g) => `${group.map((id) => JSON.stringify({ id })).join('\n')}\n${markerLine({ seq: g + 1, bytes: 1, crc32: 0 })}`).join('      \n');
}

/** One source's log, as managed storage shows it: segments written into `<dataDir>/authLogs/wal`, some closed, some deferred. */
function fakeLog(dataDir: string) {
  const dir = `${dataDir}/authLogs/wal`;
  mkdirSync(dir, { recursive: true });
  const segments: WalSegment[] = [];
  let deferred: number[] = [];
  const write = (seq: number, ids: string[][], closed = true) => {
    const path = `${dir}/${segmentFileName(seq)}`;
    writeFileSync(path, segmentBytes(ids));
    const segment = { path, seq, committedBytes: statSync(path).size, closed };
    segments.push(segment);
    segments.sort((a, b) => a.seq - b.seq);
    return segment;
  };
  const log: KeptLog = { dir, snapshot: () => segments.map((s) => ({ ...s })), deferred: () => deferred.map((seq) => ({ seq })), recovery: Promise.resolve() };
  return {
    log,
    write,
    setDeferred: (seqs: number[]) => (deferred = seqs),
    /** What compaction's release does after telling the keeper: the segment leaves the log. */
    remove: (seq: number) =>
      segments.splice(
        segments.findIndex((s) => s.seq === seq),
        1,
      ),
    segment: (seq: number) => segments.find((s) => s.seq === seq)!,
  };
}

describe('the write-ahead log as drains read it (DrainLog)', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('le-drain-log-');
  });
  afterEach(() => tmp.cleanup());

  it('reads event lines only (no commit marker, no blank line), up to a batch, one segment at a time, then the next one there is', async () => {
    const wal = fakeLog(tmp.dir);
    wal.write(1, [['a', 'b'], ['c']]);
    wal.write(3, [['d']]);
    wal.write(4, [['e']], false);
    const log = new DrainLog();
    await log.attach(tmp.dir, { authLogs: wal.log });
    const first = await log.read('authLogs', { seq: 1, offset: 0 }, 2);
    expect(first.lines.map((l) => JSON.parse(l) as { id: string })).toEqual([{ id: 'a' }, { id: 'b' }]);
    const second = await log.read('authLogs', first.next, 250);
    expect(second.lines).toEqual(['{"id":"c"}']);
    expect(second.next).toEqual({ seq: 1, offset: wal.segment(1).committedBytes });
    // Past the end of segment 1: segment 2 is gone (never kept), the next one there is is read.
    const third = await log.read('authLogs', second.next, 250);
    expect(third).toEqual({ lines: ['{"id":"d"}'], next: { seq: 3, offset: wal.segment(3).committedBytes } });
    // The active segment's end: nothing more now.
    const end = log.end('authLogs');
    expect(end).toEqual({ seq: 4, offset: wal.segment(4).committedBytes });
    expect(await log.read('authLogs', end, 250)).toEqual({ lines: [], next: end });
  });

  it('waits for a segment still recovered in the background instead of skipping it', async () => {
    const wal = fakeLog(tmp.dir);
    wal.write(1, [['a']]);
    wal.write(3, [['c']], false);
    wal.setDeferred([2]);
    const log = new DrainLog();
    await log.attach(tmp.dir, { authLogs: wal.log });
    const at = { seq: 1, offset: wal.segment(1).committedBytes };
    expect(await log.read('authLogs', at, 250)).toEqual({ lines: [], next: at });
    // Recovered: it is in the log now, and read in its turn.
    wal.write(2, [['b']]);
    expect((await log.read('authLogs', at, 250)).lines).toEqual(['{"id":"b"}']);
  });

  it('keeps a released segment only while a drain has not read past it; past the bound the oldest goes, its drains told first; a deleted drain lets go', async () => {
    const wal = fakeLog(tmp.dir);
    const one = wal.write(1, [['a']]);
    const two = wal.write(2, [['b']]);
    const three = wal.write(3, [['c']]);
    wal.write(4, [[]], false);
    const log = new DrainLog({ maxBacklogBytes: one.committedBytes + two.committedBytes });
    const dropped: KeptSegment[] = [];
    log.onDrop(async (_source, segment) => void dropped.push(segment));
    await log.attach(tmp.dir, { authLogs: wal.log });
    // No drain: nothing kept.
    await log.releasing('authLogs', [one]);
    wal.remove(1);
    expect(existsSync(tmp.path('authLogs', KEPT_DIR))).toBe(false);

    await log.createCursor(7);
    expect((await readCursors(tmp.dir)).get(7)?.positions.get('authLogs')).toEqual(log.end('authLogs'));
    // A drain made now has read past everything there is: nothing kept for it.
    await log.releasing('authLogs', [two]);
    wal.remove(2);
    expect(existsSync(tmp.path('authLogs', KEPT_DIR, segmentFileName(2)))).toBe(false);

    // A drain behind: segment 3 is kept (a hard link), and read from there once the log let it go.
    log.advance(7, 'authLogs', { seq: 3, offset: 0 });
    await log.releasing('authLogs', [three]);
    wal.remove(3);
    expect(readdirSync(tmp.path('authLogs', KEPT_DIR))).toEqual([segmentFileName(3)]);
    expect((await log.read('authLogs', { seq: 3, offset: 0 }, 250)).lines).toEqual(['{"id":"c"}']);
    // Past the bound: the oldest kept goes, its drains told before.
    const five = wal.write(5, [['e']]);
    const six = wal.write(6, [['f']]);
    await log.releasing('authLogs', [five, six]);
    expect(dropped.map((d) => d.seq)).toEqual([3]);
    expect(readdirSync(tmp.path('authLogs', KEPT_DIR))).toEqual([segmentFileName(5), segmentFileName(6)]);
    expect(log.keptBytes('authLogs')).toBeLessThanOrEqual(log.maxBacklogBytes);

    // Read past segment 5 (the cursor written): it goes; a deleted drain lets go of the rest.
    log.advance(7, 'authLogs', { seq: 6, offset: 0 });
    await log.saveCursor(7);
    expect(readdirSync(tmp.path('authLogs', KEPT_DIR))).toEqual([segmentFileName(6)]);
    expect((await readCursors(tmp.dir)).get(7)?.positions.get('authLogs')).toEqual({ seq: 6, offset: 0 });
    await log.removeCursor(7);
    expect(readdirSync(tmp.path('authLogs', KEPT_DIR))).toEqual([]);
    expect(readdirSync(tmp.path(CURSORS_DIR))).toEqual([]);
  });

  it("holds the segments a drain's cursor on disk names from the start, before the drains are open", async () => {
    const wal = fakeLog(tmp.dir);
    const one = wal.write(1, [['a']]);
    wal.write(2, [[]], false);
    mkdirSync(tmp.path(CURSORS_DIR));
    writeFileSync(tmp.path(CURSORS_DIR, '3.json'), JSON.stringify({ version: 1, sources: { authLogs: { seq: 1, offset: 0 } } }));
    const log = new DrainLog();
    await log.attach(tmp.dir, { authLogs: wal.log });
    await log.releasing('authLogs', [one]);
    expect(readdirSync(tmp.path('authLogs', KEPT_DIR))).toEqual([segmentFileName(1)]);
  });

  it('lets a segment go, counted for the drains that wanted it, when it cannot be kept: compaction never waits on a drain', async () => {
    const wal = fakeLog(tmp.dir);
    const one = wal.write(1, [['a']]);
    wal.write(2, [[]], false);
    const log = new DrainLog();
    const dropped: string[] = [];
    log.onDrop(async (_source, segment, why) => void dropped.push(`${segment.seq}: ${why}`));
    await log.attach(tmp.dir, { authLogs: wal.log });
    // A file where the folder of kept segments goes: it cannot be made.
    writeFileSync(tmp.path('authLogs', KEPT_DIR), '');
    await log.createCursor(1);
    log.advance(1, 'authLogs', { seq: 1, offset: 0 });
    await log.releasing('authLogs', [one]);
    expect(dropped).toEqual([expect.stringMatching(/^1: it could not be kept: /)]);
    expect(log.keptBytes('authLogs')).toBe(0);
  });

  it('refuses a backlog bound that is no positive number, naming the option', () => {
    expect(() => new DrainLog({ maxBacklogBytes: 0 })).toThrow(InvalidOptionError);
    expect(() => new DrainLog({ maxBacklogBytes: Number.NaN })).toThrow('maxBacklogBytes must be a positive number of bytes, not NaN.');
  });

  it("reads a cursor's rules per source; one that names its sources only has rules unknown there (its drops count every event)", async () => {
    mkdirSync(tmp.path(CURSORS_DIR));
    const sources = { authLogs: { seq: 1, offset: 0 } };
    writeFileSync(tmp.path(CURSORS_DIR, '1.json'), JSON.stringify({ version: 1, sources, reads: ['authLogs'], rules: { authLogs: ['~"error"', 'm.level:warn'] } }));
    writeFileSync(tmp.path(CURSORS_DIR, '2.json'), JSON.stringify({ version: 1, sources, reads: ['authLogs'] }));
    writeFileSync(tmp.path(CURSORS_DIR, '3.json'), JSON.stringify({ version: 1, sources }));
    const cursors = await readCursors(tmp.dir);
    expect(cursors.get(1)!.rules).toEqual(new Map([['authLogs', ['~"error"', 'm.level:warn']]]));
    expect(cursors.get(2)!.rules).toEqual(new Map([['authLogs', null]]));
    expect(cursors.get(3)!.rules).toBeNull();
  });

  it('refuses a cursor file that does not read, naming it', async () => {
    const wal = fakeLog(tmp.dir);
    mkdirSync(tmp.path(CURSORS_DIR));
    writeFileSync(tmp.path(CURSORS_DIR, '3.json'), '{"version": 1, "sou');
    const error = await new DrainLog().attach(tmp.dir, { authLogs: wal.log }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toContain(tmp.path(CURSORS_DIR, '3.json'));
  });
});
