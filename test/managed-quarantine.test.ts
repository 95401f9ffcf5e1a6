import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoints, type EndpointsWarning } from '../src/index';
import { compactFiles } from '../src/compaction/compact';
import { BackgroundCompactor } from '../src/managed/background-compactor';
import { datasetDir } from '../src/managed/managed-inputs';
import { quarantineUnreadableLines } from '../src/managed/unreadable-lines';
import { markerLine } from '../src/wal-format/commit-marker';
import { headerOf } from '../src/managed/wal/quarantine';
import { segmentFileName } from '../src/managed/wal/segment-name';
import { openWalSet, quarantineDir, walDir } from '../src/managed/wal/wal-set';
import { waitUntil } from './support/hang-guard';
import { tempDir } from './support/log-files';
import { BUILT_IN_SOURCE_SET, edgeLogs } from '../src/sources/built-ins';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-quarantine-');
afterAll(() => tmp.cleanup());

const event = (id: string) => JSON.stringify({ id, timestamp: '2026-11-21T10:00:00Z', event_message: 'GET /', project: 'q' });
/** Lines an earlier version acknowledged that no query reads: a lone surrogate, a timestamp form no rule reads, no JSON. */
const POISON = [
  JSON.stringify({ id: 'cut-emoji', timestamp: '2026-11-21T10:00:00Z', event_message: 'x\ud83d', project: 'q' }),
  JSON.stringify({ id: 'odd-time', timestamp: '2026-11-21T10:00:00+24:00', project: 'q' }),
  '{"id":"not-json", "timestamp":',
];

/** A closed segment as a version before these checks wrote it: valid groups (checksums and all) holding `lines`. */
function writeSegment(dataDir: string, seq: number, groups: string[][]): string {
  const dir = walDir(dataDir, 'edgeLogs');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, segmentFileName(seq));
  writeFileSync(
    path,
    groups
      .map((lines, g) => {
        const bytes = lines.map((l) => `${l}\n`).join('');
        return bytes + markerLine({ seq: g + 1, bytes: Buffer.byteLength(bytes), crc32: zlib.crc32(Buffer.from(bytes)) });
      })
      .join(''),
  );
  return path;
}

describe('a line no query reads never pins its segment (docs/durability.md, "The quarantine")', () => {
  it('compaction sets such lines aside with their reason, counts and tells them, and releases the segment', async () => {
    const dataDir = tmp.path('poison');
    const segment = writeSegment(dataDir, 1, [
      [event('a1'), POISON[0]!],
      [POISON[1]!, event('a2')],
      [POISON[2]!, event('a3')],
    ]);
    const warnings: EndpointsWarning[] = [];
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), onWarning: (w) => warnings.push(w) });
    try {
      // Counted once the run that released it is done.
      await waitUntil(() => ep.stats().storage!.compactedSegments === 1);
      expect(existsSync(segment)).toBe(false);
      expect(ep.stats().storage).toMatchObject({ quarantinedFiles: 1, quarantinedLines: 3 });
      const rows = (await ep.query('logs.all', { project: 'q', project_tier: 'FREE' })).result.map((r) => r.id).sort();
      expect(rows).toEqual(['a1', 'a2', 'a3']);
      const [file] = readdirSync(quarantineDir(dataDir, 'edgeLogs'));
      const path = join(quarantineDir(dataDir, 'edgeLogs'), file!);
      expect(await headerOf(path)).toMatchObject({
        reason: 'unreadable',
        segment: segmentFileName(1),
        lines: 3,
        message: expect.stringMatching(/^3 lines of 00000000000000000001\.ndjson no query can read \(1 with a lone surrogate, 1 without a usable timestamp, 1 not JSON\)/),
      });
      // The lines themselves, byte for byte.
      expect(readFileSync(path, 'utf8').split('\n').slice(1, 4)).toEqual(POISON);
      expect(warnings).toEqual([expect.objectContaining({ code: 'quarantined', source: 'edgeLogs', reason: 'unreadable', lines: 3, file: path })]);
      const [inspection] = (await ep.inspectSources()).filter((s) => s.source === 'edgeLogs');
      expect(inspection!.quarantine).toMatchObject({ dir: quarantineDir(dataDir, 'edgeLogs'), files: 1, lines: 3 });
    } finally {
      await ep.close();
    }
    // Counted from the folder after a restart too.
    const again = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
    expect(again.stats().storage).toMatchObject({ quarantinedFiles: 1, quarantinedLines: 3 });
    await again.close();
  });

  it('a segment an earlier version compacted and kept for such lines is released after the upgrade', async () => {
    const dataDir = tmp.path('pinned');
    const segment = writeSegment(dataDir, 1, [[event('b1'), POISON[2]!, event('b2')]]);
    // What an earlier version did: compacted the readable events, and kept the segment for its broken line.
    const earlier = await compactFiles({
      source: edgeLogs,
      sources: BUILT_IN_SOURCE_SET,
      outDir: datasetDir(dataDir, 'edgeLogs'),
      deleteSource: true,
      checkShape: false,
      files: [{ path: segment, kind: 'ndjson', ...statOf(segment) }],
    });
    expect(earlier.keptFiles).toEqual([{ path: segment, reason: expect.stringContaining('1 of its lines are not events') }]);
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
    try {
      await waitUntil(() => !existsSync(segment));
      expect(ep.stats().storage).toMatchObject({ quarantinedLines: 1 });
      expect((await ep.query('logs.all', { project: 'q', project_tier: 'FREE' })).result.map((r) => r.id).sort()).toEqual(['b1', 'b2']);
    } finally {
      await ep.close();
    }
  });

  it('given the offsets (shipping knows them), only those lines are set aside; none, no file', async () => {
    const dataDir = tmp.path('offsets');
    const segment = writeSegment(dataDir, 1, [[event('c1'), POISON[1]!]]);
    const set = await openWalSet(dataDir, BUILT_IN_SOURCE_SET);
    try {
      const quarantine = set.quarantines.edgeLogs;
      expect(await quarantineUnreadableLines({ source: edgeLogs, path: segment, quarantine, offsets: [] })).toBe(0);
      expect(quarantine.counts.files).toBe(0);
      const offset = Buffer.byteLength(`${event('c1')}\n`);
      expect(await quarantineUnreadableLines({ source: edgeLogs, path: segment, quarantine, offsets: [offset] })).toBe(1);
      expect(quarantine.counts).toMatchObject({ files: 1, lines: 1 });
    } finally {
      await set.close();
    }
  });
});

describe('a closed segment is verified before it is compacted (docs/durability.md, "Checksums and damage")', () => {
  it('bytes changed on disk after they were written go to the quarantine; the groups around them are compacted', async () => {
    const dataDir = tmp.path('verify');
    const set = await openWalSet(dataDir, BUILT_IN_SOURCE_SET);
    const wal = set.wals.edgeLogs;
    for (let g = 1; g <= 3; g++) await wal.append(Buffer.from(`${event(`g${g}-0`)}\n${event(`g${g}-1`)}\n`));
    await wal.roll();
    const [segment] = wal.closedSegments();
    const bytes = readFileSync(segment!.path);
    bytes[bytes.indexOf('"g2-1"') + 2] = 0x33;
    writeFileSync(segment!.path, bytes);
    const errors: unknown[] = [];
    const compactor = new BackgroundCompactor({
      source: edgeLogs,
      sources: BUILT_IN_SOURCE_SET,
      datasetDir: datasetDir(dataDir, 'edgeLogs'),
      walDir: walDir(dataDir, 'edgeLogs'),
      retentionDays: 90,
      now: () => new Date(NOW),
      wal: { closedSegments: () => wal.closedSegments(), release: (paths) => wal.release(paths), onSegmentClosed: (l) => wal.onSegmentClosed(l), verify: (p) => wal.verify(p) },
      onError: (e) => errors.push(e),
    });
    compactor.trigger();
    await compactor.settled();
    await compactor.stop();
    await set.close();
    expect(errors).toEqual([]);
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
    try {
      expect((await ep.query('logs.all', { project: 'q', project_tier: 'FREE' })).result.map((r) => r.id).sort()).toEqual(['g1-0', 'g1-1', 'g3-0', 'g3-1']);
      expect(ep.stats().storage).toMatchObject({ quarantinedFiles: 1, quarantinedLines: 3 });
    } finally {
      await ep.close();
    }
  });
});

function statOf(path: string) {
  const { size, mtimeMs, ino } = statSync(path);
  return { size, mtimeMs, ino };
}
