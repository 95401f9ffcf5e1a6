import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/duckdb/open-database';
import { writeParquet } from '../src/duckdb/write-parquet';
import { InvalidOptionError } from '../src/errors';
import { generateLogs, projectRefs, type GeneratedLogs } from '../src/fixtures/generate-logs';
import { SMALL_FIXTURE } from '../scripts/small-fixture';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { edgeLogs } from '../src/sources/built-ins';

const NOW = new Date('2026-11-21T12:00:00Z');
const root = mkdtempSync(join(tmpdir(), 'le-generate-'));
let n = 0;
const outDir = () => join(root, String(++n));

afterAll(() => rmSync(root, { recursive: true, force: true }));

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const parses = (line: string) => {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
};

async function parquetRows(file: string): Promise<number> {
  const { instance, connection } = await openDatabase();
  try {
    const reader = await connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${file}')`);
    return Number(reader.getRows()[0]![0]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('projectRefs', () => {
  it('gives distinct 20-letter lowercase refs, the same for the same seed', () => {
    const refs = projectRefs(50, 7);
    expect(new Set(refs).size).toBe(50);
    for (const ref of refs) expect(ref).toMatch(/^[a-z]{20}$/);
    expect(projectRefs(50, 7)).toEqual(refs);
    expect(projectRefs(5, 7)).toEqual(refs.slice(0, 5));
    expect(projectRefs(5, 8)).not.toEqual(refs.slice(0, 5));
  });
});

describe('generateLogs', () => {
  it('is deterministic: the same seed writes the same bytes, another seed other bytes', async () => {
    const options = { now: NOW, edgeEvents: 300, functionEvents: 200, brokenLineRate: 0.02 };
    const [a, b, c] = await Promise.all([
      generateLogs({ ...options, outDir: outDir(), seed: 5 }),
      generateLogs({ ...options, outDir: outDir(), seed: 5 }),
      generateLogs({ ...options, outDir: outDir(), seed: 6 }),
    ]);
    expect(readFileSync(a.edgeLogs[0]!, 'utf8')).toBe(readFileSync(b.edgeLogs[0]!, 'utf8'));
    expect(readFileSync(a.functionEdgeLogs[0]!, 'utf8')).toBe(readFileSync(b.functionEdgeLogs[0]!, 'utf8'));
    expect(readFileSync(a.edgeLogs[0]!, 'utf8')).not.toBe(readFileSync(c.edgeLogs[0]!, 'utf8'));
    expect(a.projects).toEqual(projectRefs(20, 5));
  });

  it('writes the requested events in the documented layout, all valid JSON when brokenLineRate is 0', async () => {
    const dir = outDir();
    const progress: Array<[number, number]> = [];
    const logs = await generateLogs({ outDir: dir, now: NOW, days: 2, projects: 4, edgeEvents: 500, functionEvents: 250, onProgress: (w, t) => progress.push([w, t]) });
    expect(logs.edgeLogs).toEqual([join(dir, 'edge', 'edge-logs.ndjson')]);
    expect(logs.functionEdgeLogs).toEqual([join(dir, 'functions', 'function-logs.ndjson')]);
    expect(logs.byFormat).toEqual({ ndjson: { edgeLogs: logs.edgeLogs[0], functionEdgeLogs: logs.functionEdgeLogs[0] } });
    const edge = lines(logs.edgeLogs[0]!).map((l) => JSON.parse(l));
    const fns = lines(logs.functionEdgeLogs[0]!).map((l) => JSON.parse(l));
    expect([edge.length, fns.length]).toEqual([500, 250]);
    expect(progress.at(-1)).toEqual([750, 750]);
    // Projects and function ids are the ones reported.
    expect(logs.projects).toHaveLength(4);
    expect(new Set(edge.map((e) => e.project))).toEqual(new Set(logs.projects));
    for (const e of fns) expect(logs.functionIds[e.metadata.project_ref]).toContain(e.metadata.function_id);
    // Events lie in [now - days, now]: demo data never in the future.
    const now = BigInt(NOW.getTime()) * 1000n;
    const times = [...edge, ...fns].map((e) => eventTimestampMicros(e.timestamp)!);
    expect(times.filter((t) => t < now - 2n * 86_400_000_000n - 1n || t > now)).toEqual([]);
    // Realistic URLs of the project.
    for (const e of edge.filter((x) => x.metadata.request)) expect(e.metadata.request.url).toMatch(/^https:\/\/[a-z0-9.-]+(\.supabase\.co|-app\.com)\//);
  });

  it('writes a few events up to 15 minutes after now only when asked (eventsAfterNow, for tests of window edges)', async () => {
    const options = { now: NOW, seed: 2, edgeEvents: 4000, functionEvents: 2000 };
    const after = (logs: GeneratedLogs) => {
      const now = BigInt(NOW.getTime()) * 1000n;
      const times = [...logs.edgeLogs, ...logs.functionEdgeLogs].flatMap((f) => lines(f).map((l) => eventTimestampMicros(JSON.parse(l).timestamp)!));
      return times.filter((t) => t > now).map((t) => t - now);
    };
    expect(after(await generateLogs({ ...options, outDir: outDir() }))).toEqual([]);
    const skewed = after(await generateLogs({ ...options, outDir: outDir(), eventsAfterNow: true }));
    expect(skewed.length).toBeGreaterThan(5);
    expect(skewed.filter((d) => d > 15n * 60_000_000n)).toEqual([]);
  });

  it('adds broken lines on top of the events when asked, without changing the events', async () => {
    const options = { now: NOW, seed: 3, edgeEvents: 1000, functionEvents: 10 };
    const clean = await generateLogs({ ...options, outDir: outDir() });
    const broken = await generateLogs({ ...options, outDir: outDir(), brokenLineRate: 0.05 });
    const all = lines(broken.edgeLogs[0]!);
    const bad = all.filter((l) => !parses(l));
    expect(bad.length).toBeGreaterThan(10);
    expect(all.filter(parses)).toEqual(lines(clean.edgeLogs[0]!));
  });

  it('writes Parquet with one row per event (broken lines left out), and no NDJSON when only Parquet is asked', async () => {
    const both = await generateLogs({ outDir: outDir(), now: NOW, edgeEvents: 400, functionEvents: 300, brokenLineRate: 0.05, formats: ['ndjson', 'parquet'] });
    expect(both.edgeLogs).toEqual([both.byFormat.ndjson!.edgeLogs, both.byFormat.parquet!.edgeLogs]);
    expect(both.byFormat.parquet!.edgeLogs).toMatch(/edge[/\\]edge-logs\.parquet$/);
    expect(await parquetRows(both.byFormat.parquet!.edgeLogs)).toBe(400);
    expect(await parquetRows(both.byFormat.parquet!.functionEdgeLogs)).toBe(300);

    const dir = outDir();
    const only = await generateLogs({ outDir: dir, now: NOW, edgeEvents: 50, functionEvents: 50, formats: ['parquet'] });
    expect(only.edgeLogs).toEqual([join(dir, 'edge', 'edge-logs.parquet')]);
    expect(readdirSync(join(dir, 'edge'))).toEqual(['edge-logs.parquet']);
    expect(readdirSync(join(dir, 'functions'))).toEqual(['function-logs.parquet']);
  });

  it('writes a file per UTC day when asked, each handed over complete as soon as no later event falls on its day', async () => {
    const options = { now: NOW, seed: 4, days: 4, edgeEvents: 20_000, functionEvents: 10_000, brokenLineRate: 0.01 };
    const whole = await generateLogs({ ...options, outDir: outDir() });
    const dir = outDir();
    let written = 0;
    const handed: Array<{ source: string; file: string; text: string; written: number }> = [];
    const byDay = await generateLogs({
      ...options,
      outDir: dir,
      onProgress: (w) => (written = w),
      filePerDay: { onDayFile: async (source, file) => void handed.push({ source, file, text: readFileSync(file, 'utf8'), written }) },
    });
    const dayOf = (line: string) => new Date(Number(eventTimestampMicros(JSON.parse(line).timestamp)! / 1000n)).toISOString().slice(0, 10);
    for (const [source, one, days] of [
      ['edgeLogs', whole.edgeLogs[0]!, byDay.edgeLogs],
      ['functionEdgeLogs', whole.functionEdgeLogs[0]!, byDay.functionEdgeLogs],
    ] as const) {
      const dates = [...new Set(lines(one).filter(parses).map(dayOf))].sort();
      expect(dates).toHaveLength(5); // 4 days before noon: 5 calendar days
      expect(days).toEqual(dates.map((d) => expect.stringMatching(new RegExp(`-${d}\\.ndjson$`))));
      // Handed over in day order, each already complete.
      expect(handed.filter((h) => h.source === source).map((h) => h.file)).toEqual(days);
      for (const h of handed.filter((x) => x.source === source)) expect(h.text).toBe(readFileSync(h.file, 'utf8'));
      // The same lines as the one file, in its order within each day (a broken line goes with its event).
      const all = lines(one);
      const perDay = new Map<string, string[]>();
      let day = '';
      for (const line of all) (day = parses(line) ? dayOf(line) : day), perDay.set(day, [...(perDay.get(day) ?? []), line]);
      for (const file of days) expect(lines(file)).toEqual(perDay.get(file.slice(-17, -7)));
    }
    // The first day went while most events were still to come.
    expect(handed[0]!.written).toBeLessThan(15_000);
    expect(byDay.byFormat.ndjson!.edgeLogs).toBe(join(dir, 'edge', 'edge-logs-*.ndjson'));
  });

  it('refuses bad options with a clear error', async () => {
    await expect(generateLogs({ outDir: outDir(), now: new Date('nope') })).rejects.toThrow(/now/);
    await expect(generateLogs({ outDir: outDir(), now: NOW, edgeEvents: -1 })).rejects.toThrow(/edgeEvents/);
    await expect(generateLogs({ outDir: outDir(), now: NOW, days: 0 })).rejects.toThrow(
      expect.objectContaining({ code: 'invalid_option', option: 'days', message: 'generateLogs: days must be positive' }),
    );
    await expect(generateLogs({ outDir: outDir(), now: NOW, projects: 1.5 })).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(generateLogs({ outDir: outDir(), now: NOW, brokenLineRate: 1 })).rejects.toThrow(/brokenLineRate/);
    await expect(generateLogs({ outDir: outDir(), now: NOW, formats: [] })).rejects.toThrow(/formats/);
    await expect(generateLogs({ outDir: outDir(), now: NOW, formats: ['parquet'], filePerDay: { onDayFile: async () => {} } })).rejects.toThrow(/filePerDay/);
  });
});

describe('writeParquet', () => {
  it('counts the rows it wrote and replaces the target atomically (no temporary file left)', async () => {
    const logs = await generateLogs({ outDir: outDir(), now: NOW, edgeEvents: 120, functionEvents: 0, brokenLineRate: 0.1 });
    const target = join(root, 'atomic', 'out.parquet');
    rmSync(join(root, 'atomic'), { recursive: true, force: true });
    mkdirSync(join(root, 'atomic'));
    expect(await writeParquet(edgeLogs, logs.edgeLogs, target)).toEqual({ rows: 120 });
    expect(await writeParquet(edgeLogs, logs.edgeLogs, target)).toEqual({ rows: 120 });
    expect(readdirSync(join(root, 'atomic'))).toEqual(['out.parquet']);
    expect(await parquetRows(target)).toBe(120);
  });
});

describe('committed fixtures', () => {
  it('are what `npm run fixtures` writes (regenerate them after changing the generator)', async () => {
    const dir = outDir();
    await generateLogs({ ...SMALL_FIXTURE, formats: ['ndjson'], outDir: dir });
    for (const file of ['edge/edge-logs.ndjson', 'functions/function-logs.ndjson']) {
      const committed = fileURLToPath(new URL(`../fixtures/small/${file}`, import.meta.url));
      expect(existsSync(committed), file).toBe(true);
      expect(readFileSync(join(dir, file), 'utf8') === readFileSync(committed, 'utf8'), `${file} is up to date`).toBe(true);
    }
  });
});
