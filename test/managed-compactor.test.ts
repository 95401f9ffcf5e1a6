import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { usageApiCounts } from '../src/definitions/usage-api-counts';
import { forgetDeletedInputs } from '../src/managed/dataset-maintenance';
import { SETTLE_QUIET_MS } from '../src/managed/merge-policy';
import { Wal } from '../src/managed/wal/wal';
import { manualTime } from './support/cache-harness';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { edgeEvent, endpointsAt, tempDir } from './support/log-files';
import { fakeLog, gatewayCompactor } from './support/fake-log';
import { nextRunBytes, runBytesFor } from '../src/managed/background-compactor';
import { waitUntil } from './support/hang-guard';
import { BurstDatabase } from '../src/duckdb/burst-database';
import { createEndpoints } from '../src/index';
import { edgeLogs } from '../src/sources/built-ins';

describe('managed storage: the background compactor', () => {
  const tmp = tempDir('le-managed-');
  afterAll(() => tmp.cleanup());

  /** A gateway compactor at CENSUS_NOW whose elapsed clock (when days turn quiet) the test sets. */
  function settlingCompactor(name: string) {
    const walDir = tmp.path(name, 'wal');
    const datasetDir = tmp.path(name, 'parquet');
    const wal = fakeLog(walDir);
    const clock = { elapsed: 0 };
    const compactor = gatewayCompactor({
      datasetDir,
      walDir,
      wal,
      now: () => new Date(CENSUS_NOW),
      elapsedMs: () => clock.elapsed,
      onError: (e) => {
        throw e;
      },
    });
    let segments = 0;
    return {
      datasetDir,
      compactor,
      /** A segment of these events closes, and the run it starts ends. */
      async compactSegment(events: object[]) {
        wal.add(`${String(++segments).padStart(20, '0')}.ndjson`, events);
        wal.close();
        await compactor.settled();
      },
      /** A run at this elapsed time, to its end. */
      async runAt(ms: number) {
        clock.elapsed = ms;
        compactor.trigger();
        await compactor.settled();
      },
    };
  }

  it('compacts closed segments exactly once, merges a day of small files, forgets deleted segments', async () => {
    const walDir = tmp.path('edgeLogs', 'wal');
    const datasetDir = tmp.path('edgeLogs', 'parquet');
    const wal = fakeLog(walDir);
    const errors: unknown[] = [];
    const compactor = gatewayCompactor({
      datasetDir,
      walDir,
      wal,
      now: () => new Date(CENSUS_NOW),
      onError: (e) => errors.push(e),
    });
    const { ep } = await endpointsAt({ edgeLogs: [join(walDir, '*.ndjson'), datasetDir] }, CENSUS_NOW);
    // usage.api-counts as its raw statement alone answers, to hold the rollup variant's answers to.
    const { ep: raw } = await endpointsAt({ edgeLogs: [join(walDir, '*.ndjson'), datasetDir] }, CENSUS_NOW, {
      endpoints: [{ ...usageApiCounts, name: 'usage.raw', id: '6f0c1d2e-3b4a-4c5d-8e6f-7a8b9c0d1e2f', variantOf: () => null }],
    });
    const usage = async (e: typeof ep, name: string) => (await e.query(name, { project: '.', interval: 'daily' })).result;
    try {
      // Ten segments, each closing on its own: ten compactions, each writing small files.
      for (let i = 0; i < 10; i++) {
        wal.add(`${String(i).padStart(20, '0')}.ndjson`, censusEvents(`s${i}`, 20));
        // A segment not compacted yet beside the dataset: the rollups are partly stored.
        expect(await usage(ep, 'usage.api-counts')).toEqual(await usage(raw, 'usage.raw'));
        wal.close();
        await compactor.settled();
        // Between runs, the segments not compacted yet and the dataset give each event once.
        expect((await census(ep)).total).toBe(20 * (i + 1));
        expect(await usage(ep, 'usage.api-counts')).toEqual(await usage(raw, 'usage.raw'));
      }
      expect(errors).toEqual([]);
      expect(readdirSync(walDir)).toEqual([]);
      const requests = ((await usage(ep, 'usage.api-counts')) as Array<Record<string, number>>).reduce(
        (n, r) => n + r.total_rest_requests! + r.total_storage_requests! + r.total_auth_requests! + r.total_realtime_requests!,
        0,
      );
      expect(requests).toBeGreaterThan(0);
      const counted = await census(ep);
      expect(counted.ids).toEqual(
        Array.from({ length: 10 }, (_, i) => idRange(`s${i}`, 0, 20))
          .flat()
          .sort(),
      );
      // Every day holds fewer files than the merge threshold after merging.
      const state = readDatasetStateStable(datasetDir);
      const perDay = new Map<string, number>();
      for (const f of state.files.values()) perDay.set(f.day!, (perDay.get(f.day!) ?? 0) + 1);
      expect(Math.max(...perDay.values())).toBeLessThan(8);
      // Merged files get their stored rollups as compaction's do (one path: stored-rollups.ts).
      for (const f of state.files.values()) expect(Object.keys(f.rollups ?? {}).sort()).toEqual(Object.keys(edgeLogs.rollups).sort());
      expect(compactor.counters.mergedFiles).toBeGreaterThan(0);
      // The records of deleted segments are forgotten (in bulk, past 64 of them, so the log stays
      // small); what the dataset answers does not change.
      expect(state.inputs).toHaveLength(10);
      expect(await forgetDeletedInputs(datasetDir, 'edgeLogs', walDir + sep, 1)).toBe(10);
      expect(readDatasetStateStable(datasetDir).inputs).toEqual([]);
      expect(await census(ep)).toEqual(counted);
    } finally {
      await compactor.stop();
      await ep.close();
      await raw.close();
    }
  });

  /** `count` closed segments of 20 events each (ids `<prefix><i>`), and a compactor's options that take two of them a run, never three. */
  const closedSegments = (name: string, prefix: string, count: number) => {
    const walDir = tmp.path(name, 'wal');
    const datasetDir = tmp.path(name, 'parquet');
    const wal = fakeLog(walDir);
    for (let i = 0; i < count; i++) wal.add(`${String(i).padStart(20, '0')}.ndjson`, censusEvents(`${prefix}${i}`, 20));
    const size = Math.max(...wal.closedSegments().map((s) => statSync(s.path).size));
    const errors: unknown[] = [];
    const options = { datasetDir, walDir, wal, now: () => new Date(CENSUS_NOW), onError: (e: unknown) => errors.push(e), maxRunBytes: 2 * size + 10 };
    return { walDir, datasetDir, wal, errors, options };
  };

  it("a run takes the oldest closed segments up to its bytes (one at least); the rest go in the runs right after, each event once; the day's files merge once none waits", async () => {
    const { walDir, datasetDir, wal, errors, options } = closedSegments('bounded', 'b', 7);
    const runs: number[] = [];
    const filesAtRun: number[] = [];
    // The rows of each file a run wrote, to tell what the merges took of them.
    const runFiles = new Map<string, number>();
    const compactor = gatewayCompactor({
      ...options,
      onCompacted: (r) => {
        runs.push(r.deletedFiles.length);
        const state = readDatasetStateStable(datasetDir);
        filesAtRun.push(state.files.size);
        for (const f of r.files) runFiles.set(f, state.files.get(f)!.rows);
      },
    });
    const { ep } = await endpointsAt({ edgeLogs: [join(walDir, '*.ndjson'), datasetDir] }, CENSUS_NOW);
    try {
      compactor.trigger();
      await waitUntil(() => readdirSync(walDir).length === 0);
      await compactor.settled();
      expect(errors).toEqual([]);
      expect(runs.filter((n) => n > 0)).toEqual([2, 2, 2, 1]);
      // Each run a file of each day its events fall on, none merged while segments waited; merged after the last.
      const perRun = filesAtRun[0]!;
      expect(filesAtRun.slice(0, 4)).toEqual([perRun, 2 * perRun, 3 * perRun, 4 * perRun]);
      expect(compactor.counters.mergedFiles).toBeGreaterThan(0);
      expect(readDatasetStateStable(datasetDir).files.size).toBeLessThan(4 * perRun);
      // The runs wrote each event once; the merges wrote again the events of every run's file they took.
      expect(compactor.counters.compactedRows).toBe(140);
      const left = readDatasetStateStable(datasetDir).files;
      const takenRows = [...runFiles].filter(([path]) => !left.has(path)).reduce((n, [, rows]) => n + rows, 0);
      expect(takenRows).toBeGreaterThan(0);
      expect(compactor.counters.mergedRows).toBe(takenRows);
      expect((await census(ep)).ids).toEqual(
        Array.from({ length: 7 }, (_, i) => idRange(`b${i}`, 0, 20))
          .flat()
          .sort(),
      );
      // A segment larger than the bound alone still goes, in a run of its own.
      wal.add(`${String(7).padStart(20, '0')}.ndjson`, censusEvents('big', 200));
      wal.close();
      await waitUntil(() => readdirSync(walDir).length === 0);
      await compactor.settled();
      expect(runs.at(-1)).toBe(1);
      expect((await census(ep)).total).toBe(7 * 20 + 200);
    } finally {
      await compactor.stop();
      await ep.close();
    }
  });

  it("a burst's runs share one DuckDB, closed once the compactor has caught up (its memory comes back while idle)", async () => {
    const { walDir, datasetDir, wal, errors, options } = closedSegments('burst', 'u', 4);
    const database = new BurstDatabase(tmp.path('burst', 'spill'));
    const openAfterRun: boolean[] = [];
    const compactor = gatewayCompactor({
      ...options,
      database,
      onCompacted: (r) => r.deletedFiles.length > 0 && openAfterRun.push(database.isOpen),
    });
    try {
      compactor.trigger();
      await waitUntil(() => readdirSync(walDir).length === 0);
      await compactor.settled();
      expect(errors).toEqual([]);
      // Two runs back to back on one instance, kept between them, closed after the last.
      expect(openAfterRun).toEqual([true, true]);
      expect(database.opens).toBe(1);
      expect(database.isOpen).toBe(false);
      // The next burst opens one again, and closes it again.
      wal.add(`${String(4).padStart(20, '0')}.ndjson`, censusEvents('u4', 20));
      wal.close();
      await waitUntil(() => readdirSync(walDir).length === 0);
      await compactor.settled();
      expect(database.opens).toBe(2);
      expect(database.isOpen).toBe(false);
      expect(readDatasetStateStable(datasetDir).files.size).toBeGreaterThan(0);
    } finally {
      await compactor.stop();
    }
  });

  it("a run's bytes: a fifth of its DuckDB's memory limit; halved after a run that ran out of memory, doubled back after one that ended", () => {
    expect(runBytesFor({ memoryLimit: '80MB' })).toBe(16_000_000);
    expect(runBytesFor(undefined)).toBe(256 * 2 ** 20);
    // Out of memory on 30 MB taken: the next takes 15; then back up, never past the bound.
    expect(nextRunBytes(40e6, 40e6, 30e6, 'out-of-memory')).toBe(15e6);
    expect(nextRunBytes(15e6, 40e6, 15e6, 'out-of-memory')).toBe(7.5e6);
    expect(nextRunBytes(7.5e6, 40e6, 7e6, 'done')).toBe(15e6);
    expect(nextRunBytes(30e6, 40e6, 30e6, 'done')).toBe(40e6);
    expect(nextRunBytes(1, 40e6, 0, 'out-of-memory')).toBe(1);
  });

  it("merges a settled day's files into one (ended an hour ago, no file written for a minute), not today's", async () => {
    const { datasetDir, compactor, compactSegment, runAt } = settlingCompactor('settle');
    // Events of random text: a file of several MiB per day, which the size tiers never merge with a file of one event.
    const bulky = (day: string, count: number) =>
      Array.from({ length: count }, (_, i) =>
        edgeEvent({ id: `${day}-${i}`, project: 'p0', timestamp: `${day}T10:00:00.${String(i).padStart(6, '0')}Z`, message: randomBytes(30_000).toString('base64') }),
      );
    const late = (day: string) => edgeEvent({ id: `${day}-late`, project: 'p0', timestamp: `${day}T23:00:00Z` });
    const perDay = () => {
      const out: Record<string, number> = {};
      for (const f of readDatasetStateStable(datasetDir).files.values()) out[f.day!] = (out[f.day!] ?? 0) + 1;
      return out;
    };
    const rows = () => [...readDatasetStateStable(datasetDir).files.values()].reduce((n, f) => n + f.rows, 0);
    try {
      await compactSegment([...bulky('2026-11-20', 200), ...bulky('2026-11-21', 200)]);
      await compactSegment([late('2026-11-20'), late('2026-11-21')]);
      // Both days were written just now: a file of one event beside one of several MiB, each.
      expect(perDay()).toEqual({ '2026-11-20': 2, '2026-11-21': 2 });
      await runAt(SETTLE_QUIET_MS - 1);
      expect(perDay()).toEqual({ '2026-11-20': 2, '2026-11-21': 2 });
      // A minute without a file of 2026-11-20, which ended 12 hours before now: one file. Today stays as it is.
      await runAt(SETTLE_QUIET_MS);
      expect(perDay()).toEqual({ '2026-11-20': 1, '2026-11-21': 2 });
      expect(rows()).toBe(402);
      // Two settled days with two files each (a store written before this rule): one a run, the
      // next run at once, until none is left.
      await compactSegment([...bulky('2026-11-18', 200), ...bulky('2026-11-19', 200)]);
      await compactSegment([late('2026-11-18'), late('2026-11-19')]);
      expect(perDay()).toEqual({ '2026-11-18': 2, '2026-11-19': 2, '2026-11-20': 1, '2026-11-21': 2 });
      const runs = compactor.counters.runs;
      await runAt(2 * SETTLE_QUIET_MS);
      expect(perDay()).toEqual({ '2026-11-18': 1, '2026-11-19': 1, '2026-11-20': 1, '2026-11-21': 2 });
      expect(compactor.counters.runs - runs).toBe(2);
      expect(rows()).toBe(804);
    } finally {
      await compactor.stop();
    }
  });

  it('sets its next run for when a day that is over turns quiet (sooner than its 30 s timer); today never settles', async () => {
    const { compactor, compactSegment, runAt } = settlingCompactor('quiet');
    // The delay of the compactor's next timer, as it sets it at the end of each run.
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const nextRunIn = () => timers.mock.calls.at(-1)![1];
    const event = (day: string) => edgeEvent({ id: `${day}-1`, project: 'p0', timestamp: `${day}T12:00:00Z` });
    try {
      // Today written at elapsed 0: it never settles, the timer stays at 30 s.
      await compactSegment([event('2026-11-21')]);
      await runAt(40_000);
      expect(nextRunIn()).toBe(30_000);
      // A day that is over written at elapsed 40 s: quiet at 100 s, so a run at 80 s sets the timer for the 20 s left.
      await compactSegment([event('2026-11-20')]);
      await runAt(80_000);
      expect(nextRunIn()).toBe(SETTLE_QUIET_MS - 40_000 + 100);
    } finally {
      timers.mockRestore();
      await compactor.stop();
    }
  });

  it('compacts a segment the write-ahead log closed once quiet: its events are in the dataset and the segment released, with no roll asked for', async () => {
    const time = manualTime('1970-01-01T00:00:00Z');
    const walDir = tmp.path('quiet-roll', 'wal');
    const datasetDir = tmp.path('quiet-roll', 'parquet');
    const wal = await Wal.open({ dir: walDir, segmentQuietMs: 5000, quietRollBytes: 1024, now: time.clock, scheduler: time.scheduler });
    const compactor = gatewayCompactor({
      datasetDir,
      walDir,
      wal,
      now: () => new Date(CENSUS_NOW),
      onError: (e) => {
        throw e;
      },
    });
    const { ep } = await endpointsAt({ edgeLogs: [join(walDir, '*.ndjson'), datasetDir] }, CENSUS_NOW);
    try {
      const closed = new Promise<void>((done) => wal.onSegmentClosed(() => done()));
      const body = (events: object[]) => Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));
      await wal.append(body(censusEvents('q', 20)));
      await time.advance(2000);
      await wal.append(body(censusEvents('q', 20, 20)));
      // Its quiet timer fires 5 s after the first group, 3 s after the last: not quiet long enough yet.
      await time.advance(3000);
      expect(wal.closedSegments()).toEqual([]);
      expect(compactor.counters.runs).toBe(0);
      // The sender stopped at 2 s: at 7 s the segment closes and compaction takes it.
      await time.advance(2000);
      await closed;
      await compactor.settled();
      expect(compactor.counters.compactedSegments).toBe(1);
      expect(wal.closedSegments()).toEqual([]);
      expect(await census(ep)).toEqual({ total: 40, ids: idRange('q', 0, 40) });
    } finally {
      await compactor.stop();
      await wal.close();
      await ep.close();
    }
  });

  it("is not settled while a run's segments have left the log and its events are not counted yet", async () => {
    // Each segment closes 1 ms after its first event, so compaction takes it at once.
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('settled-window'), maxSegmentAgeMs: 1 }, now: () => new Date(CENSUS_NOW), cache: false });
    // What storage says the moment a run gives its segments back, before it returns.
    const seen: Array<{ settled: boolean; compacted: number }> = [];
    const release = Wal.prototype.release;
    const spy = vi.spyOn(Wal.prototype, 'release').mockImplementation(async function (this: Wal, ...args: Parameters<Wal['release']>) {
      await release.apply(this, args);
      const { settled, compactedEvents } = ep.stats().storage!;
      seen.push({ settled, compacted: compactedEvents });
    });
    try {
      await ep.ingest('cloudflare.logs.prod', censusEvents('w', 20));
      await waitUntil(() => ep.stats().storage!.settled);
      expect(seen.length).toBeGreaterThan(0);
      // The log was empty then, and the run's 20 events not counted: not settled.
      expect(seen).toEqual(seen.map(({ compacted }) => ({ settled: false, compacted })));
      expect(ep.stats().storage!.compactedEvents).toBe(20);
    } finally {
      spy.mockRestore();
      await ep.close();
    }
  });

  it('drops the days past retention', async () => {
    const walDir = tmp.path('ret', 'wal');
    const datasetDir = tmp.path('ret', 'parquet');
    const wal = fakeLog(walDir);
    let now = new Date(CENSUS_NOW);
    const compactor = gatewayCompactor({
      datasetDir,
      walDir,
      wal,
      retentionDays: 3,
      now: () => now,
      onError: (e) => {
        throw e;
      },
    });
    try {
      const day = (d: string, id: string) => edgeEvent({ id, project: 'p0', timestamp: `${d}T12:00:00Z`, path: '/rest/v1/x' });
      wal.add('00000000000000000001.ndjson', [day('2026-11-15', 'old'), day('2026-11-18', 'edge'), day('2026-11-19', 'kept'), day('2026-11-21', 'new')]);
      wal.close();
      await compactor.settled();
      // 2026-11-21T12:00 minus 3 days is 2026-11-18T12:00: days before 2026-11-18 go.
      const days = () => [...readDatasetStateStable(datasetDir).files.values()].map((f) => f.day).sort();
      expect(days()).toEqual(['2026-11-18', '2026-11-19', '2026-11-21']);
      expect(existsSync(join(datasetDir, 'date=2026-11-15'))).toBe(false);
      now = new Date('2026-11-22T12:00:00Z');
      compactor.trigger();
      await compactor.settled();
      expect(days()).toEqual(['2026-11-19', '2026-11-21']);
    } finally {
      await compactor.stop();
    }
  });
});
