import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLogs } from '../src/engine/duckdb/compact';
import type { Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const DAY = 86_400_000;

function events() {
  const edge: object[] = [];
  const fn: object[] = [];
  for (let i = 0; i < 600; i++) {
    const t = Date.parse(NOW) - (i * 7 * 60_000 + (i % 13) * 1000);
    const project = ['abc', 'def', 'ghi'][i % 3]!;
    const path = ['/rest/v1/a', '/storage/v1/b', '/auth/v1/c', '/realtime/v1/d', '/other'][i % 5]!;
    // both timestamp forms
    const ts = i % 4 === 0 ? t * 1000 + (i % 999) : new Date(t).toISOString().replace('Z', `${String(i % 999).padStart(3, '0')}Z`);
    edge.push(edgeEvent({ project, path, timestamp: ts, id: `e${i}` }));
    fn.push(functionEvent({ project, functionId: `f${i % 2}`, timestamp: ts, ms: (i * 37) % 500, status: i % 9 === 0 ? 500 : 200, id: `f${i}` }));
  }
  return { edge, fn };
}

async function everything(ep: Endpoints) {
  const out: unknown[] = [];
  for (const project of ['abc', 'def']) {
    for (const interval of ['1hr', '1day', '7day']) out.push(await ep.functionsInvocationStats({ project, interval }));
    for (const interval of ['hourly', 'daily', 'minutely'] as const) out.push(await ep.usageApiCounts({ project, interval }));
    for (const project_tier of ['FREE', 'PRO']) out.push(await ep.logsAll({ project, project_tier }));
  }
  return out;
}

const snapshot = (dir: string) =>
  Object.fromEntries(
    (readdirSync(dir, { recursive: true }) as string[])
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort()
      .map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
  );

describe('compactLogs', () => {
  const tmp = tempDir();
  let expected: unknown[];

  beforeAll(async () => {
    const { edge, fn } = events();
    writeLines(tmp.path('ndjson', 'edge-1.ndjson'), edge.slice(0, 300));
    writeLines(tmp.path('ndjson', 'edge-2.ndjson'), edge.slice(300));
    writeLines(tmp.path('ndjson', 'fn.ndjson'), fn);
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('ndjson', 'edge-*.ndjson'), functionEdgeLogs: tmp.path('ndjson', 'fn.ndjson') }, NOW);
    expected = await everything(ep);
    await ep.close();
  });
  afterAll(() => tmp.cleanup());

  it('is lossless: the Parquet dataset gives the same answers, partitioned by UTC day', async () => {
    const edge = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: tmp.path('pq', 'edge') });
    const fn = await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('ndjson', 'fn.ndjson'), outDir: tmp.path('pq', 'fn') });
    expect(edge).toMatchObject({ rows: 600, skippedLines: 0, alreadyCompacted: false, deletedSource: false });
    expect(fn.rows).toBe(600);
    expect(edge.files.every((f) => /^date=\d{4}-\d{2}-\d{2}[/\\]part-[0-9a-f]{16}-\d+\.parquet$/.test(f))).toBe(true);
    expect(new Set(edge.files.map((f) => f.slice(0, 15))).size).toBeGreaterThanOrEqual(3);
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('pq', 'edge', '**', '*.parquet'), functionEdgeLogs: tmp.path('pq', 'fn', '**', '*.parquet') }, NOW);
    try {
      expect(await everything(ep)).toEqual(expected);
      expect((await ep.inspectSources()).map((s) => s.parquetRows)).toEqual([600, 600]);
    } finally {
      await ep.close();
    }
    // The source is untouched without deleteSource.
    expect(existsSync(tmp.path('ndjson', 'edge-1.ndjson'))).toBe(true);
  });

  it('is idempotent: a second run over the same inputs changes nothing', async () => {
    const out = tmp.path('idem');
    const first = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
    const before = snapshot(out);
    const second = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
    expect(second).toMatchObject({ alreadyCompacted: true, rows: first.rows, files: first.files });
    expect(snapshot(out)).toEqual(before);
  });

  it('an interrupted run leaves the source intact and publishes nothing; the next run completes', async () => {
    const out = tmp.path('abort');
    const source = snapshot(tmp.path('ndjson'));
    for (const stage of ['writing', 'verifying'] as const) {
      const controller = new AbortController();
      const run = compactLogs({
        source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out, deleteSource: true, signal: controller.signal,
        onProgress: (p) => { if (p.stage === stage) controller.abort(); },
      });
      await expect(run).rejects.toThrow(/aborted|interrupt/i);
      expect(snapshot(tmp.path('ndjson'))).toEqual(source);
      expect(existsSync(out) ? (readdirSync(out, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')) : []).toEqual([]);
    }
    const done = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: tmp.path('abort-ok') });
    expect(done.rows).toBe(600);
  });

  it('a run interrupted while publishing is completed by the next run without duplicates', async () => {
    const out = tmp.path('half');
    const controller = new AbortController();
    await expect(compactLogs({
      source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out, signal: controller.signal,
      onProgress: (p) => { if (p.stage === 'publishing') controller.abort(); },
    })).rejects.toThrow(/aborted/);
    const published = (readdirSync(out, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet'));
    expect(published).toHaveLength(1);
    const again = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
    expect(again.alreadyCompacted).toBe(false);
    const { ep } = await endpointsAt({ edgeLogs: join(out, '**', '*.parquet') }, NOW);
    try {
      expect((await ep.inspectSources())[0]!.parquetRows).toBe(600);
    } finally {
      await ep.close();
    }
  });

  it('deletes the source only when asked, after the check, and never when lines were skipped', async () => {
    const { edge } = events();
    writeLines(tmp.path('del', 'clean.ndjson'), edge.slice(0, 50));
    writeLines(tmp.path('del-broken', 'broken.ndjson'), [...edge.slice(0, 10), 'garbage {', ...edge.slice(10, 20)]);
    const clean = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('del', '*.ndjson'), outDir: tmp.path('del-out'), deleteSource: true });
    expect(clean).toMatchObject({ rows: 50, deletedSource: true });
    expect(existsSync(tmp.path('del', 'clean.ndjson'))).toBe(false);
    const broken = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('del-broken', '*.ndjson'), outDir: tmp.path('del-broken-out'), deleteSource: true });
    expect(broken).toMatchObject({ rows: 20, skippedLines: 1, deletedSource: false });
    expect(existsSync(tmp.path('del-broken', 'broken.ndjson'))).toBe(true);
  });

  it('no input files: nothing to do', async () => {
    const result = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('none', '*.ndjson'), outDir: tmp.path('none-out') });
    expect(result).toEqual({ inputFiles: [], rows: 0, skippedLines: 0, files: [], alreadyCompacted: false, deletedSource: false });
  });
});
