import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cutFromCounts, MinuteCounts, type MinuteRows } from '../src/engine/duckdb/minute-counts';
import { pageWithin } from '../src/engine/duckdb/newest-first';
import type { Endpoints } from '../src/index';
import { edgeEvent, tempDir, wholeAndByDay } from './support/log-files';

const MINUTE = 60_000_000n;
const NOW = '2026-11-21T12:00:00Z';

/**
 * A page of logs.all over a stored day takes its cut from the day files' rows of the project per
 * minute, instead of a statement for the oldest timestamp of its rows: the newest whole minutes
 * under the page's upper bound that hold its rows. The page is kept only when full with its oldest
 * row at or after the cut; its answers are those of the same events read whole.
 */
describe('the cut of a page from the stored rows per minute', () => {
  const counts = (first: number, ...rows: number[]): MinuteRows => ({ first, rows: Uint32Array.from(rows) });

  it('starts at the newest whole minute from which the counted minutes hold the limit', () => {
    // Minutes 10, 11, 12 hold 50, 60, 70 rows.
    expect(cutFromCounts([counts(10, 50, 60, 70)], 100, null, null)).toBe(11n * MINUTE);
    expect(cutFromCounts([counts(10, 50, 60, 70)], 70, null, null)).toBe(12n * MINUTE);
    expect(cutFromCounts([counts(10, 50, 60, 70)], 181, null, null)).toBeNull();
  });

  it('counts only the minutes that end at or before the upper bound', () => {
    // An upper bound inside minute 12: its 70 rows may be after it, so 11 and 10 hold the 100.
    expect(cutFromCounts([counts(10, 50, 60, 70)], 100, 13n * MINUTE - 2n, null)).toBe(10n * MINUTE);
    // A bound on minute 12's last instant keeps it whole.
    expect(cutFromCounts([counts(10, 50, 60, 70)], 100, 13n * MINUTE - 1n, null)).toBe(11n * MINUTE);
    expect(cutFromCounts([counts(10, 50, 60, 70)], 100, 11n * MINUTE, null)).toBeNull();
  });

  it('counts no minute that starts at or before the exclusive lower bound', () => {
    expect(cutFromCounts([counts(10, 50, 60, 70)], 100, null, 11n * MINUTE - 1n)).toBe(11n * MINUTE);
    expect(cutFromCounts([counts(10, 50, 60, 70)], 100, null, 11n * MINUTE)).toBeNull();
  });

  it("sums a day's files minute by minute", () => {
    expect(cutFromCounts([counts(10, 50, 60), counts(11, 30, 20)], 100, null, null)).toBe(11n * MINUTE);
    expect(cutFromCounts([counts(10, 50, 60), counts(12, 30)], 100, null, null)).toBe(10n * MINUTE);
    expect(cutFromCounts([counts(0), counts(12, 30)], 10, null, null)).toBe(12n * MINUTE);
  });

  it('keeps a page only when it is full and its oldest row is at or after the cut', () => {
    const rows = (...ts: bigint[]) => ts.map((timestamp) => ({ timestamp }));
    expect(pageWithin(rows(30n, 20n), 2, 20n)).toBe(true);
    // Fewer rows than the limit: the cut may have left out some of the page's.
    expect(pageWithin(rows(30n), 2, 20n)).toBe(false);
    // A row older than the cut (read beside the cut files): a row left out may be newer than it.
    expect(pageWithin(rows(30n, 19n), 2, 20n)).toBe(false);
  });

  it('keeps the counts of at most 1,000 file versions: counting one more drops them all', async () => {
    // Bounded memory: each kept version holds up to 1,440 counts (docs/definitions.md, "Newest first").
    const kept = new MinuteCounts();
    const count = vi.fn(async () => counts(10, 50, 60, 70));
    const version = (i: number) => ({ path: `/d/part-${i}.parquet`, size: 10, crc32: i });
    const page = (i: number) => kept.cut([version(i)], 'project', 'abc', 100, null, null, count);
    for (let i = 0; i <= 1_000; i++) {
      expect(await page(i)).toBeNull();
      expect(await page(i)).toBe(11n * MINUTE);
    }
    expect(count).toHaveBeenCalledTimes(1_001);
    // The 1,001st was kept after the others were dropped: it is not counted again, the first is.
    expect(await page(1_000)).toBe(11n * MINUTE);
    expect(await page(0)).toBeNull();
    expect(await page(0)).toBe(11n * MINUTE);
    expect(count).toHaveBeenCalledTimes(1_002);
  });

  it('counts a file version on its second page, then keeps it; a file without a CRC-32 never', async () => {
    const kept = new MinuteCounts();
    const count = vi.fn(async () => counts(10, 50, 60, 70));
    const file = { path: '/d/date=2026-11-21/part-0.parquet', size: 10, crc32: 7 };
    // The first page of a version: no count, no cut (a file rewritten before the next page is never counted).
    expect(await kept.cut([file], 'project', 'abc', 100, null, null, count)).toBeNull();
    expect(count).not.toHaveBeenCalled();
    expect(await kept.cut([file], 'project', 'abc', 100, null, null, count)).toBe(11n * MINUTE);
    expect(await kept.cut([file], 'project', 'abc', 100, null, null, count)).toBe(11n * MINUTE);
    expect(count).toHaveBeenCalledTimes(1);
    // Another version, another project: each asked once before it is counted.
    for (const [f, project] of [
      [{ ...file, crc32: 8 }, 'abc'],
      [file, 'other'],
    ] as const) {
      expect(await kept.cut([f], 'project', project, 100, null, null, count)).toBeNull();
      expect(await kept.cut([f], 'project', project, 100, null, null, count)).toBe(11n * MINUTE);
    }
    expect(count).toHaveBeenCalledTimes(3);
    const unversioned = { path: file.path, size: 10 };
    expect(await kept.cut([unversioned], 'project', 'abc', 100, null, null, count)).toBeNull();
    expect(await kept.cut([unversioned], 'project', 'abc', 100, null, null, count)).toBeNull();
    expect(count).toHaveBeenCalledTimes(3);
  });
});

describe('logs.all pages cut from the rows per minute answer as if every row were read', () => {
  const tmp = tempDir('le-minute-cut-');
  let whole: Endpoints;
  let byDay: Endpoints;

  beforeAll(async () => {
    const events: object[] = [];
    const base = Date.parse('2026-11-20T00:00:00Z');
    // A dense project, an event every 7 s over two days (ties: two events on each 5th instant), and
    // a sparse one; ids out of order.
    for (let i = 0; i < (2 * 86_400) / 7; i++) {
      const t = new Date(base + i * 7_000 + (i % 3)).toISOString();
      events.push(edgeEvent({ id: `d-${(i * 7919) % 100_003}`, project: 'dense', timestamp: t }));
      if (i % 5 === 0) events.push(edgeEvent({ id: `t-${(i * 31) % 1009}`, project: 'dense', timestamp: t }));
      if (i % 400 === 0) events.push(edgeEvent({ project: 'sparse', timestamp: t }));
    }
    ({ whole, byDay } = await wholeAndByDay(tmp, events, NOW));
  });
  afterAll(async () => {
    await whole.close();
    await byDay.close();
    tmp.cleanup();
  });

  it('for bounds inside a minute, on its edges and lower bounds close to them', async () => {
    const cut = vi.spyOn(MinuteCounts.prototype, 'cut');
    for (const project of ['dense', 'sparse']) {
      for (const bounds of [
        { iso_timestamp_end: '2026-11-21T11:00:00Z' },
        { iso_timestamp_end: '2026-11-21T10:59:59.999999Z' },
        { iso_timestamp_end: '2026-11-20T12:00:00.002Z' },
        { iso_timestamp_end: '2026-11-20T12:34:56.789Z' },
        { iso_timestamp_end: '2026-11-20T00:05:00Z' },
        { iso_timestamp_start: '2026-11-20T12:20:00Z', iso_timestamp_end: '2026-11-20T12:34:56Z' },
        { iso_timestamp_start: '2026-11-20T12:23:00Z', iso_timestamp_end: '2026-11-20T12:34:00Z' },
        { iso_timestamp_start: '2026-11-20T12:29:59Z', iso_timestamp_end: '2026-11-20T12:34:00Z' },
      ]) {
        const params = { project, project_tier: 'PAYG', ...bounds };
        // Twice: a day's files are counted on their second page.
        for (let i = 0; i < 2; i++) expect(await byDay.logsAll(params), JSON.stringify(params)).toEqual(await whole.logsAll(params));
      }
    }
    // The cut was taken for the dense project's pages (not only the two phases).
    const taken = await Promise.all(cut.mock.results.map((r) => r.value as Promise<bigint | null>));
    expect(taken.filter((c) => c !== null).length).toBeGreaterThanOrEqual(5);
    cut.mockRestore();
  });
});
