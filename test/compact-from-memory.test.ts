import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { compactFiles } from '../src/compaction/compact';
import type { StageParsed } from '../src/compaction/write-run';
import { MemoryTables } from '../src/managed/memory-tables';
import { Wal } from '../src/managed/wal/wal';
import { segmentSeqOf } from '../src/managed/wal/segment-name';
import { TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { serializeEvents } from '../src/ingest/serialize-events';
import { SourceSet } from '../src/sources/source-set';
import { SUPABASE_SOURCES } from '../src/sources/supabase/supabase-sources';
import type { SourceDescriptor } from '../src/sources/source-descriptor';
import { statOrNull, type ListedFile } from '../src/files/list-glob';
import { Prng } from '../src/fixtures/prng';
import { BUILDERS } from './support/supabase/vector-events';
import type { LogTable } from './support/supabase/vector-sources';
import type { Micros } from './support/supabase/instants';
import { tempDir } from './support/log-files';
import { waitUntil } from './support/hang-guard';
import { census, CENSUS_NOW, censusEvents } from './support/census';
import { createEndpoints } from '../src/index';

// docs/performance.md, "Footprint": a managed compaction run whose segments the memory tables hold
// whole stages its rows from them (parsed once, at ingest) instead of parsing the segments' lines
// again, and writes the same Parquet files; a run with any segment they do not hold reads the lines.

const SOURCES = SourceSet.of(SUPABASE_SOURCES);
const ARRIVAL = '2026-11-21T12:00:00.000000Z';

/** `count` Vector events of a feed as ingest writes them (ids given), from 2026-11-21 10:00 on. */
function feedLines(table: LogTable, count: number, seed: number): Buffer {
  const prng = new Prng(seed);
  const start = Date.parse('2026-11-21T10:00:00Z') * 1000;
  const events = Array.from({ length: count }, (_, i) => BUILDERS[table](prng, { micros: (start + i * 1_700_000 + (i % 3) * 86_400_000_000) as Micros, nanos: 0 }));
  return serializeEvents(events, ARRIVAL);
}

/** A source's WAL and memory tables in a DuckDB of their own (the queries' instance in a server). */
async function withStore(dir: string, test: (store: { wal: Wal; memory: MemoryTables }) => Promise<void>): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const setup = await instance.connect();
  for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
  const memory = new MemoryTables(SOURCES, { folder: `${dir}-memory` });
  memory.attach(instance);
  const wal = await Wal.open({ dir });
  try {
    await test({ wal, memory });
  } finally {
    await wal.close();
    await memory.close();
    setup.closeSync();
    instance.closeSync();
  }
}

/** Appends a group to the WAL and, as managed storage does once it is durable, to the memory tables. */
async function ingest(store: { wal: Wal; memory: MemoryTables }, source: SourceDescriptor, lines: Buffer, mirror = true): Promise<void> {
  const { seq } = await store.wal.append(lines);
  if (mirror) await store.memory.insert(source.name, seq, lines);
}

function listed(wal: Wal): ListedFile[] {
  return wal.closedSegments().map(({ path }) => {
    const s = statOrNull(path)!;
    return { path, kind: 'ndjson', size: s.size, mtimeMs: s.mtimeMs, ino: s.ino };
  });
}

/** managed storage's `stageParsed` over these memory tables, recording what each call answered. */
function stagingFrom(memory: MemoryTables, source: SourceDescriptor, answers: boolean[]): StageParsed {
  return async (paths, rowsFile) => {
    const answer = await memory.stage(source.name, new Map(paths.map((p) => [segmentSeqOf(basename(p))!, p])), rowsFile);
    answers.push(answer);
    return answer;
  };
}

/** Compacts the segments into `outDir` as managed storage does, staging from memory when `stageParsed` is given. */
function compact(source: SourceDescriptor, files: ListedFile[], outDir: string, stageParsed?: StageParsed) {
  return compactFiles({ source, sources: SOURCES, outDir, files, sealed: true, checkShape: false, duckdb: { threads: 1, memoryLimit: '256MB' }, stageParsed });
}

/** Every data file of a dataset (relative path -> bytes), the run's id (random per run) written as `R`s. */
function dataFiles(outDir: string): Map<string, string> {
  const state = readDatasetStateStable(outDir);
  const out = new Map<string, string>();
  for (const file of state.files.values()) {
    const run = /part-([0-9a-f]{16})-/.exec(file.path)![1]!;
    const normal = (text: string) => text.replaceAll(run, 'R'.repeat(16));
    out.set(normal(file.path), normal(readFileSync(join(outDir, file.path)).toString('latin1')));
  }
  return out;
}

/** The inputs' records of a dataset: what each run read of each segment, its events and skipped lines. */
function records(outDir: string) {
  return readDatasetStateStable(outDir).inputs.map((r) => ({ ...r }));
}

describe('a managed compaction run stages its rows from the memory tables when they hold its segments', () => {
  const tmp = tempDir('le-compact-memory-');
  afterAll(() => tmp.cleanup());

  for (const [table, sourceName, seed] of [
    ['edge_logs', 'edgeLogs', 1],
    ['postgres_logs', 'postgresLogs', 2],
  ] as const) {
    it(`${table}: the same Parquet files, byte for byte, and the same records as from the segments' lines (typed columns too)`, async () => {
      const source = SOURCES.get(sourceName);
      await withStore(tmp.path(table, 'wal'), async (store) => {
        await ingest(store, source, feedLines(table, 300, seed));
        await ingest(store, source, feedLines(table, 200, seed + 10));
        await store.wal.roll();
        // A line that is JSON but no event (no usable timestamp): counted as skipped both ways.
        await ingest(store, source, Buffer.concat([feedLines(table, 250, seed + 20), Buffer.from('{"id":"not-an-event","timestamp":"yesterday"}\n')]));
        await store.wal.roll();
        const files = listed(store.wal);
        expect(files).toHaveLength(2);
        const answers: boolean[] = [];
        const fromMemory = await compact(source, files, tmp.path(table, 'from-memory'), stagingFrom(store.memory, source, answers));
        const fromLines = await compact(source, files, tmp.path(table, 'from-lines'));
        expect(answers).toEqual([true]);
        expect(fromMemory).toMatchObject({ rows: 750, skippedLines: 1, inputFiles: fromLines.inputFiles });
        expect(fromLines).toMatchObject({ rows: 750, skippedLines: 1 });
        expect(records(tmp.path(table, 'from-memory'))).toEqual(records(tmp.path(table, 'from-lines')));
        const memoryFiles = dataFiles(tmp.path(table, 'from-memory'));
        const lineFiles = dataFiles(tmp.path(table, 'from-lines'));
        expect(memoryFiles.size).toBe(3); // three days
        expect([...memoryFiles.keys()]).toEqual([...lineFiles.keys()]);
        for (const [path, bytes] of memoryFiles) expect(bytes === lineFiles.get(path), path).toBe(true);
      });
    });
  }

  it('a run taking a segment the memory tables do not hold (written before this process, or refused) reads the lines', async () => {
    const source = SOURCES.get('edgeLogs');
    await withStore(tmp.path('partly', 'wal'), async (store) => {
      // Segment 1 as a previous process left it: not in memory; segment 2 mirrored.
      await ingest(store, source, feedLines('edge_logs', 100, 3), false);
      await store.wal.roll();
      await ingest(store, source, feedLines('edge_logs', 100, 4));
      await store.wal.roll();
      const answers: boolean[] = [];
      const run = await compact(source, listed(store.wal), tmp.path('partly', 'out'), stagingFrom(store.memory, source, answers));
      expect(answers).toEqual([false]);
      expect(run).toMatchObject({ rows: 200, skippedLines: 0 });
      expect([...dataFiles(tmp.path('partly', 'out')).values()].length).toBeGreaterThan(0);
    });
    await withStore(tmp.path('broken', 'wal'), async (store) => {
      // A line the INSERT cannot parse: its segment is left to its file, where it is a skipped line.
      await ingest(store, source, Buffer.concat([feedLines('edge_logs', 50, 5), Buffer.from('{"id": broken\n')]));
      await store.wal.roll();
      const answers: boolean[] = [];
      const run = await compact(source, listed(store.wal), tmp.path('broken', 'out'), stagingFrom(store.memory, source, answers));
      expect(answers).toEqual([false]);
      expect(run).toMatchObject({ rows: 50, skippedLines: 1 });
    });
  });

  it('a segment whose file changed on disk after its rows went in (its check set bytes aside) is compacted from its file as it is now', async () => {
    const source = SOURCES.get('edgeLogs');
    await withStore(tmp.path('diverged', 'wal'), async (store) => {
      for (let g = 1; g <= 3; g++) await ingest(store, source, feedLines('edge_logs', 10, 10 + g));
      await store.wal.roll();
      const [file] = listed(store.wal);
      const bytes = readFileSync(file!.path);
      // One byte of the second group's first event changed: the group no longer matches its checksum.
      const at = bytes.indexOf('\n', bytes.indexOf('_wal_commit')) + 10;
      bytes[at] = bytes[at]! ^ 0x01;
      writeFileSync(file!.path, bytes);
      // What managed storage does with its check's answer (managed-storage.ts, the compactor's `verify`).
      expect(await store.wal.verify(file!.path)).toHaveLength(1);
      store.memory.diverged(source.name, segmentSeqOf(basename(file!.path))!);
      const answers: boolean[] = [];
      const run = await compact(source, listed(store.wal), tmp.path('diverged', 'out'), stagingFrom(store.memory, source, answers));
      expect(answers).toEqual([false]);
      expect(run).toMatchObject({ rows: 20 });
    });
  });

  it('a run over part of an input (a line still being written, or the rest of one partly compacted) never asks: it reads a copy of that part', async () => {
    const source = SOURCES.get('edgeLogs');
    await withStore(tmp.path('part', 'wal'), async (store) => {
      await ingest(store, source, feedLines('edge_logs', 40, 6));
      await store.wal.roll();
      const [file] = listed(store.wal);
      const asked: string[][] = [];
      const stageParsed: StageParsed = async (paths) => (asked.push([...paths]), false);
      // Listed as half its size, its last line cut: the run takes the complete lines before it.
      const first = await compact(source, [{ ...file!, size: Math.floor(file!.size / 2) }], tmp.path('part', 'out'), stageParsed);
      // Then the rest of it.
      const rest = await compact(source, [file!], tmp.path('part', 'out'), stageParsed);
      expect(asked).toEqual([]);
      expect(first.rows + rest.rows).toBe(40);
      expect(rest.inputFiles).toEqual([file!.path]);
      // The whole of it, in place: asked, with the path compaction reads.
      await compact(source, [file!], tmp.path('part', 'whole'), stageParsed);
      expect(asked.map((paths) => paths.map((p) => relative(tmp.path('part'), p)))).toEqual([['wal/00000000000000000001.ndjson']]);
    });
  });

  it('managed storage stages its runs from the memory tables, and every event is read once after', async () => {
    const stage = vi.spyOn(MemoryTables.prototype, 'stage');
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('managed'), maxSegmentBytes: 8 * 1024 }, now: () => new Date(CENSUS_NOW), cache: false });
    const acked: string[] = [];
    try {
      for (let batch = 0; batch < 12; batch++) {
        const events = censusEvents(`s${batch}`, 20);
        await ep.ingest('cloudflare.logs.prod', events);
        acked.push(...events.map((e) => e.id as string));
      }
      // Every closed segment compacted (the active one stays in the WAL and in memory).
      await waitUntil(() => ep.stats().storage!.compactedSegments >= 5);
    } finally {
      await ep.close();
    }
    const answers = await Promise.all(stage.mock.results.map((r) => r.value as Promise<boolean>));
    stage.mockRestore();
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.every((a) => a)).toBe(true);
    const again = await createEndpoints({ storage: { dataDir: tmp.path('managed') }, now: () => new Date(CENSUS_NOW), cache: false });
    try {
      expect(await census(again)).toEqual({ total: acked.length, ids: [...acked].sort() });
    } finally {
      await again.close();
    }
  });
});
