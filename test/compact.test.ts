import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { compactFiles, compactLogs } from '../src/compaction/compact';
import { readsInPlace } from '../src/compaction/read-paths';
import { scanInput } from '../src/compaction/input-scan';
import { InputIndex, RangeHashes } from '../src/files/input-coverage';
import type { ListedFile } from '../src/files/list-glob';
import { BUILT_IN_SOURCE_SET, edgeLogs as edgeLogsSource } from '../src/sources/built-ins';
import { appendCommit, ensureDataset, readDatasetStateStable } from '../src/dataset/dataset-log';
import { acquireLock } from '../src/util/lock-file';
import { InvalidOptionError, SUPABASE_SOURCES, type Endpoints } from '../src/index';
import { DuckDBInstance } from '@duckdb/node-api';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

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

const parquetUnder = (dir: string) => (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet'));

/** A census of everything the endpoints read from these sources at CENSUS_NOW. */
async function censusOf(edgeLogs: string | string[]) {
  const { ep } = await endpointsAt({ edgeLogs }, CENSUS_NOW);
  try {
    return await census(ep);
  } finally {
    await ep.close();
  }
}

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
    expect(edge).toMatchObject({ rows: 600, skippedLines: 0, alreadyCompacted: false, deletedSource: false, inputFiles: [tmp.path('ndjson', 'edge-1.ndjson'), tmp.path('ndjson', 'edge-2.ndjson')] });
    expect(fn.rows).toBe(600);
    expect(edge.files.every((f) => /^date=\d{4}-\d{2}-\d{2}\/part-[0-9a-f]{16}-\d+\.parquet$/.test(f))).toBe(true);
    expect(new Set(edge.files.map((f) => f.slice(0, 15))).size).toBeGreaterThanOrEqual(3);
    // The dataset folder itself, or a glob of its files: both read the committed files only.
    for (const sources of [
      { edgeLogs: tmp.path('pq', 'edge'), functionEdgeLogs: tmp.path('pq', 'fn') },
      { edgeLogs: tmp.path('pq', 'edge', '**', '*.parquet'), functionEdgeLogs: tmp.path('pq', 'fn', '**', '*.parquet') },
    ]) {
      const { ep } = await endpointsAt(sources, NOW);
      try {
        expect(await everything(ep)).toEqual(expected);
        expect((await ep.inspectSources()).map((s) => s.parquetRows)).toEqual([600, 600]);
      } finally {
        await ep.close();
      }
    }
    // The source is untouched without deleteSource.
    expect(existsSync(tmp.path('ndjson', 'edge-1.ndjson'))).toBe(true);
  });

  it('is idempotent: a second run over the same inputs changes nothing', async () => {
    const out = tmp.path('idem');
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
    const before = snapshot(out);
    const second = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
    expect(second).toMatchObject({ alreadyCompacted: true, rows: 0, files: [], inputFiles: [] });
    expect(snapshot(out)).toEqual(before);
  });

  it('an interrupted run commits nothing and leaves the inputs intact; the next run completes exactly once', async () => {
    const source = snapshot(tmp.path('ndjson'));
    for (const stage of ['listing', 'writing', 'verifying', 'publishing'] as const) {
      const out = tmp.path(`abort-${stage}`);
      const controller = new AbortController();
      const run = compactLogs({
        source: 'edgeLogs',
        inputs: tmp.path('ndjson', 'edge-*.ndjson'),
        outDir: out,
        deleteSource: true,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.stage === stage) controller.abort();
        },
      });
      await expect(run).rejects.toThrow(/aborted|interrupt/i);
      expect(snapshot(tmp.path('ndjson'))).toEqual(source);
      const { ep } = await endpointsAt({ edgeLogs: out }, NOW);
      expect((await ep.inspectSources())[0]!.parquetRows).toBe(0);
      await ep.close();
      const done = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
      expect(done.rows).toBe(600);
      const { ep: after } = await endpointsAt({ edgeLogs: out }, NOW);
      expect((await after.inspectSources())[0]!.parquetRows).toBe(600);
      await after.close();
      // What the killed run left (staging, files no commit names) is gone.
      expect(readdirSync(out).filter((f) => f.startsWith('.compact-'))).toEqual([]);
      // Only the committed files, their heads (the newest rows of each project, for logs.all) and
      // their stored rollups, the companions out of the data folders.
      expect(parquetUnder(out).sort()).toEqual(done.files.flatMap((f) => [f, `_heads/${f}`, ...Object.keys(edgeLogsSource.rollups).map((rollup) => `_rollups/${rollup}/${f}`)]).sort());
    }
  });

  it('keeps the heads out of the data folders: a plain glob of the data files reads each event once', async () => {
    const out = tmp.path('glob-once');
    const done = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: out });
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const connection = await db.connect();
    const rows = await connection.runAndReadAll(`SELECT count(*) AS n, count(DISTINCT id) AS ids FROM read_parquet('${join(out, 'date=*', '*.parquet')}')`);
    connection.closeSync();
    db.closeSync();
    expect(rows.getRowObjects()[0]).toEqual({ n: BigInt(done.rows), ids: BigInt(done.rows) });
  });

  it('reads a dataset whose heads lie beside its files (the layout of earlier versions) as before', async () => {
    const written = tmp.path('old-heads-written');
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'edge-*.ndjson'), outDir: written });
    // The same files in a new dataset whose commit puts every head at `date=<day>/_head-<name>`,
    // as earlier versions wrote them.
    const out = tmp.path('old-heads');
    await ensureDataset(out);
    const add = [...readDatasetStateStable(written).files.values()].map((file) => {
      const old = file.path.replace('/', '/_head-');
      mkdirSync(join(out, file.path, '..'), { recursive: true });
      cpSync(join(written, file.path), join(out, file.path));
      cpSync(join(written, file.head!.path), join(out, old));
      return { ...file, head: { ...file.head!, path: old } };
    });
    expect(await appendCommit(readDatasetStateStable(out), { source: 'edgeLogs', add, remove: [], inputs: [] })).toBe(true);
    expect(parquetUnder(out).some((f) => f.includes('/_head-'))).toBe(true);
    const { ep } = await endpointsAt({ edgeLogs: out }, NOW);
    const { ep: ndjson } = await endpointsAt({ edgeLogs: tmp.path('ndjson', 'edge-*.ndjson') }, NOW);
    try {
      for (const project of ['abc', 'def'])
        for (const project_tier of ['FREE', 'PRO']) {
          const rows = await ep.logsAll({ project, project_tier });
          expect(rows.length).toBeGreaterThan(0);
          expect(rows).toEqual(await ndjson.logsAll({ project, project_tier }));
        }
    } finally {
      await ep.close();
      await ndjson.close();
    }
  });

  it('deletes the source only when asked, after the check, and never a file with skipped lines', async () => {
    const { edge } = events();
    writeLines(tmp.path('del', 'clean.ndjson'), edge.slice(0, 50));
    writeLines(tmp.path('del-broken', 'broken.ndjson'), [...edge.slice(0, 10), 'garbage {', ...edge.slice(10, 20)]);
    const clean = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('del', '*.ndjson'), outDir: tmp.path('del-out'), deleteSource: true });
    expect(clean).toMatchObject({ rows: 50, deletedSource: true, deletedFiles: [tmp.path('del', 'clean.ndjson')] });
    expect(existsSync(tmp.path('del', 'clean.ndjson'))).toBe(false);
    const broken = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('del-broken', '*.ndjson'), outDir: tmp.path('del-broken-out'), deleteSource: true });
    expect(broken).toMatchObject({ rows: 20, skippedLines: 1, deletedSource: false, deletedFiles: [] });
    expect(broken.keptFiles).toEqual([{ path: tmp.path('del-broken', 'broken.ndjson'), reason: expect.stringContaining('1 of its lines are not events') }]);
    expect(existsSync(tmp.path('del-broken', 'broken.ndjson'))).toBe(true);
  });

  it('no input files: nothing to do', async () => {
    const result = await compactLogs({ source: 'edgeLogs', inputs: tmp.path('none', '*.ndjson'), outDir: tmp.path('none-out') });
    expect(result).toMatchObject({ inputFiles: [], rows: 0, skippedLines: 0, files: [], alreadyCompacted: false, deletedSource: false });
  });
});

describe('compactLogs: nothing lost, nothing doubled (docs/semantics.md, "Compacted datasets")', () => {
  const tmp = tempDir('le-compact-once-');
  afterAll(() => tmp.cleanup());

  it('a rerun over a glob that grew compacts only the new files', async () => {
    const logs = tmp.path('grow', 'logs');
    const out = tmp.path('grow', 'out');
    writeLines(join(logs, 'a.ndjson'), censusEvents('a', 300));
    writeLines(join(logs, 'b.ndjson'), censusEvents('b', 300));
    expect((await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out })).rows).toBe(600);
    writeLines(join(logs, 'c.ndjson'), censusEvents('c', 50));
    const rerun = await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out });
    expect(rerun).toMatchObject({ rows: 50, inputFiles: [join(logs, 'c.ndjson')] });
    const counted = await censusOf(out);
    expect(counted.total).toBe(650);
    expect(counted.ids).toEqual([...idRange('a', 0, 300), ...idRange('b', 0, 300), ...idRange('c', 0, 50)].sort());
  });

  it('an input kept for its broken line is never compacted again, with --delete-source too', async () => {
    const logs = tmp.path('kept', 'logs');
    const out = tmp.path('kept', 'out');
    writeLines(join(logs, 'a.ndjson'), [...censusEvents('a', 100), '{"broken": ', ...censusEvents('a', 100, 100)]);
    writeLines(join(logs, 'b.ndjson'), censusEvents('b', 100));
    const first = await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out, deleteSource: true });
    expect(first).toMatchObject({ rows: 300, skippedLines: 1, deletedFiles: [join(logs, 'b.ndjson')] });
    writeLines(join(logs, 'c.ndjson'), censusEvents('c', 20));
    const second = await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out, deleteSource: true });
    expect(second).toMatchObject({ rows: 20, inputFiles: [join(logs, 'c.ndjson')], deletedFiles: [join(logs, 'c.ndjson')] });
    expect(second.keptFiles.map((k) => k.path)).toEqual([join(logs, 'a.ndjson')]);
    const third = await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out, deleteSource: true });
    expect(third).toMatchObject({ alreadyCompacted: true, rows: 0 });
    // The NDJSON and the dataset read together: the kept file is covered, so nothing doubles.
    const counted = await censusOf([join(logs, '*.ndjson'), out]);
    expect(counted.total).toBe(320);
    expect(counted.ids).toEqual([...idRange('a', 0, 200), ...idRange('b', 0, 100), ...idRange('c', 0, 20)].sort());
  });

  it('a file appended after compaction: only the new lines are compacted; a half-written last line waits', async () => {
    const file = tmp.path('append', 'logs', 'live.ndjson');
    const out = tmp.path('append', 'out');
    const lines = censusEvents('live', 120).map((e) => JSON.stringify(e));
    mkdirSync(tmp.path('append', 'logs'), { recursive: true });
    writeFileSync(file, `${lines.slice(0, 50).join('\n')}\n${lines[50]!.slice(0, 30)}`); // the writer is mid-line
    expect((await compactLogs({ source: 'edgeLogs', inputs: file, outDir: out })).rows).toBe(50);
    // Read together, the NDJSON's uncompacted part and the dataset give every complete event once.
    expect((await censusOf([file, out])).total).toBe(50);
    appendFileSync(file, `${lines[50]!.slice(30)}\n${lines.slice(51, 100).join('\n')}\n`);
    expect((await censusOf([file, out])).total).toBe(100);
    const second = await compactLogs({ source: 'edgeLogs', inputs: file, outDir: out });
    expect(second.rows).toBe(50);
    appendFileSync(file, lines.slice(100).join('\n')); // a last line without a newline, but whole
    expect((await compactLogs({ source: 'edgeLogs', inputs: file, outDir: out })).rows).toBe(20);
    const counted = await censusOf([file, out]);
    expect(counted.ids).toEqual(idRange('live', 0, 120));
    expect(counted.total).toBe(120);
    expect((await censusOf(out)).total).toBe(120);
  });

  /** A file as a listing sees it now (what compaction's inputs are). */
  const listedNow = (path: string): ListedFile => {
    const st = statSync(path);
    return { path, kind: 'ndjson', size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
  };

  it('reads an input in place only when its scan saw it unchanged since its listing and it was last written before the quiet mark, or it is sealed (docs/cli.md)', async () => {
    const file = tmp.path('steady', 'logs', 'a.ndjson');
    writeLines(file, censusEvents('s', 10));
    const scanOf = (listed: ListedFile) => scanInput(listed, new InputIndex([]), new Map([[listed.path, listed]]), new RangeHashes());
    const old = new Date(Date.parse('2020-01-01T00:00:00Z'));
    utimesSync(file, old, old);
    const mark = Date.parse('2020-01-01T00:00:05Z');
    // Unchanged from its listing to the end of its scan, last written before the mark: read where it is.
    const quiet = await scanOf(listedNow(file));
    expect(quiet.steady).toBe(true);
    expect(readsInPlace(quiet, mark)).toBe(true);
    // Written after the mark (a live log appended every second, steady for the instant of a scan): a copy.
    expect(readsInPlace(quiet, old.getTime() - 1)).toBe(false);
    // ... unless sealed: nobody writes it again.
    expect(readsInPlace(quiet, Infinity)).toBe(true);
    // Appended after its listing: read from a copy of the listed bytes, whatever its mtime says.
    const listed = listedNow(file);
    appendFileSync(file, `${JSON.stringify(censusEvents('s', 1, 10)[0])}\n`);
    utimesSync(file, old, old);
    const grown = await scanOf(listed);
    expect(grown.steady).toBe(false);
    expect(readsInPlace(grown, Infinity)).toBe(false);
    expect(readsInPlace({ ...grown, compressed: true }, mark)).toBe(true);
  });

  it('compacts a live log (last written just now) from a copy: a line appended while DuckDB reads fails nothing; a quiet file is read in place', async () => {
    /** Compacts `file` once, appending one event the moment its rows are staged (the read done). */
    const runAppending = (file: string, out: string, tag: string) => {
      let appended = false;
      return compactLogs({
        source: 'edgeLogs',
        inputs: file,
        outDir: out,
        onProgress: ({ stage }) => {
          if (stage !== 'writing' || appended) return;
          appended = true;
          appendFileSync(file, `${JSON.stringify(censusEvents(tag, 1, 30)[0])}\n`);
        },
      });
    };
    const live = tmp.path('live-now', 'logs', 'a.ndjson');
    const liveOut = tmp.path('live-now', 'out');
    writeLines(live, censusEvents('now', 30));
    // Its mtime ahead of the run's start on the filesystem's clock, whatever the load on this machine.
    const ahead = new Date(statSync(live).mtimeMs + 3_600_000);
    utimesSync(live, ahead, ahead);
    expect((await runAppending(live, liveOut, 'now')).rows).toBe(30);
    expect((await compactLogs({ source: 'edgeLogs', inputs: live, outDir: liveOut })).rows).toBe(1);
    expect((await censusOf(liveOut)).ids).toEqual(idRange('now', 0, 31));
    // The same append to a file last written long ago: read in place, so the run sees it change
    // and commits nothing (what the copy above spares a live log).
    const quiet = tmp.path('quiet', 'logs', 'a.ndjson');
    writeLines(quiet, censusEvents('quiet', 30));
    const old = new Date(Date.parse('2020-01-01T00:00:00Z'));
    utimesSync(quiet, old, old);
    await expect(runAppending(quiet, tmp.path('quiet', 'out'), 'quiet')).rejects.toMatchObject({ code: 'storage_failed' });
  });

  it('an input with an old mtime appended after its listing is compacted from a copy: the listed events once, the rest next run', async () => {
    const file = tmp.path('late', 'logs', 'a.ndjson');
    const out = tmp.path('late', 'out');
    writeLines(file, censusEvents('late', 40));
    const old = new Date(Date.parse('2020-01-01T00:00:00Z'));
    utimesSync(file, old, old);
    const listed = listedNow(file);
    // A writer appends between the listing and the run: read in place, the run would read these
    // lines too, then find the file changed and commit nothing.
    appendFileSync(
      file,
      censusEvents('late', 10, 40)
        .map((e) => `${JSON.stringify(e)}\n`)
        .join(''),
    );
    const source = BUILT_IN_SOURCE_SET.find('edgeLogs')!;
    const first = await compactFiles({ source, sources: BUILT_IN_SOURCE_SET, outDir: out, files: [listed] });
    expect(first.rows).toBe(40);
    expect((await compactLogs({ source: 'edgeLogs', inputs: file, outDir: out })).rows).toBe(10);
    const counted = await censusOf(out);
    expect(counted.ids).toEqual(idRange('late', 0, 50));
    expect(counted.total).toBe(50);
  });

  it('a file renamed (rotated) after compaction is recognised by its content, not compacted again', async () => {
    const logs = tmp.path('rotate', 'logs');
    const out = tmp.path('rotate', 'out');
    writeLines(join(logs, 'current.ndjson'), censusEvents('day1', 200));
    expect((await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out })).rows).toBe(200);
    renameSync(join(logs, 'current.ndjson'), join(logs, '2026-11-20.ndjson'));
    writeLines(join(logs, 'current.ndjson'), censusEvents('day2', 30));
    expect((await censusOf([join(logs, '*.ndjson'), out])).total).toBe(230);
    const rerun = await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out, deleteSource: true });
    expect(rerun).toMatchObject({ rows: 30, inputFiles: [join(logs, 'current.ndjson')] });
    expect(rerun.deletedFiles.sort()).toEqual([join(logs, '2026-11-20.ndjson'), join(logs, 'current.ndjson')]);
    const counted = await censusOf(out);
    expect(counted.total).toBe(230);
    expect(counted.ids).toEqual([...idRange('day1', 0, 200), ...idRange('day2', 0, 30)].sort());
  });

  it('a file rewritten under the same name with other content is compacted as new', async () => {
    const file = tmp.path('rewrite', 'logs', 'app.ndjson');
    const out = tmp.path('rewrite', 'out');
    writeLines(file, censusEvents('old', 40));
    await compactLogs({ source: 'edgeLogs', inputs: file, outDir: out });
    writeLines(file, censusEvents('new', 60)); // copytruncate-style rotation, then more logs
    expect((await compactLogs({ source: 'edgeLogs', inputs: file, outDir: out })).rows).toBe(60);
    const counted = await censusOf(out);
    expect(counted.ids).toEqual([...idRange('old', 0, 40), ...idRange('new', 0, 60)].sort());
  });

  it('cleans up what a killed run left: its staging folder and Parquet files no commit names', async () => {
    const out = tmp.path('stale', 'out');
    writeLines(tmp.path('stale', 'logs', 'a.ndjson'), censusEvents('s', 40));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('stale', 'logs', '*.ndjson'), outDir: out });
    mkdirSync(join(out, '.compact-0123456789abcdef.tmp', 'out'), { recursive: true });
    writeFileSync(join(out, '.compact-0123456789abcdef.tmp', 'out', 'x.parquet'), 'half');
    writeFileSync(join(out, 'date=2026-11-21', 'part-0123456789abcdef-0.parquet'), 'unpublished');
    expect((await censusOf(out)).total).toBe(40);
    writeLines(tmp.path('stale', 'logs', 'b.ndjson'), censusEvents('t', 10));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('stale', 'logs', '*.ndjson'), outDir: out });
    expect(existsSync(join(out, '.compact-0123456789abcdef.tmp'))).toBe(false);
    expect(existsSync(join(out, 'date=2026-11-21', 'part-0123456789abcdef-0.parquet'))).toBe(false);
    expect((await censusOf(out)).total).toBe(50);
  });

  it('refuses events that do not look like the source, and a dataset of the other source', async () => {
    writeLines(tmp.path('shape', 'edge.ndjson'), censusEvents('e', 10));
    const error = await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('shape', 'edge.ndjson'), outDir: tmp.path('shape', 'out') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(
      /None of the 10 events sampled looks like an event of functionEdgeLogs \(function_edge_logs\); 10 look like events of edgeLogs \(edge_logs\)\. Did you mean --source edge\?/,
    );
    expect(parquetUnder(tmp.path('shape', 'out'))).toEqual([]);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('shape', 'edge.ndjson'), outDir: tmp.path('shape', 'out') });
    writeLines(tmp.path('shape', 'fn.ndjson'), [functionEvent({ timestamp: CENSUS_NOW })]);
    await expect(compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('shape', 'fn.ndjson'), outDir: tmp.path('shape', 'out') })).rejects.toThrow(
      /holds edgeLogs events; it cannot take functionEdgeLogs events/,
    );
  });

  it('checkpoints its log: after many runs a reader folds a checkpoint and a few commits, and still sees everything once', async () => {
    const logs = tmp.path('many', 'logs');
    const out = tmp.path('many', 'out');
    for (let run = 0; run < 40; run++) {
      writeLines(join(logs, `f-${String(run).padStart(2, '0')}.ndjson`), censusEvents(`m${run}`, 2));
      expect((await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out, deleteSource: run % 2 === 0 })).rows).toBe(2);
    }
    const log = readdirSync(join(out, '_compact'));
    expect(log.filter((n) => n.endsWith('.checkpoint.json'))).toEqual(['00000000000000000032.checkpoint.json']);
    expect(log.filter((n) => /^\d{20}\.json$/.test(n)).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `${String(33 + i).padStart(20, '0')}.json`));
    const counted = await censusOf([join(logs, '*.ndjson'), out]);
    expect(counted.total).toBe(80);
    expect(counted.ids).toEqual(
      Array.from({ length: 40 }, (_, run) => idRange(`m${run}`, 0, 2))
        .flat()
        .sort(),
    );
    // Inputs recorded before the checkpoint are still recognised: nothing is compacted again.
    expect((await compactLogs({ source: 'edgeLogs', inputs: join(logs, '*.ndjson'), outDir: out })).alreadyCompacted).toBe(true);
  });

  it('refuses a second compaction of the same dataset while one runs', async () => {
    const out = tmp.path('lock', 'out');
    writeLines(tmp.path('lock', 'a.ndjson'), censusEvents('l', 30));
    mkdirSync(join(out, '_compact'), { recursive: true });
    // Held by a live process (this one), as a running compaction holds it.
    const held = await acquireLock(join(out, '_compact', 'LOCK'), 'compact');
    await expect(compactLogs({ source: 'edgeLogs', inputs: tmp.path('lock', 'a.ndjson'), outDir: out })).rejects.toThrow(/Another compaction is running/);
    await held.release();
    expect((await compactLogs({ source: 'edgeLogs', inputs: tmp.path('lock', 'a.ndjson'), outDir: out })).rows).toBe(30);
  });

  it('takes over the lock of a compaction that was killed', async () => {
    const out = tmp.path('lock-stale', 'out');
    writeLines(tmp.path('lock-stale', 'a.ndjson'), censusEvents('k', 5));
    mkdirSync(join(out, '_compact'), { recursive: true });
    // Left by a compaction killed on this machine: its socket no longer answers.
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    writeFileSync(join(out, '_compact', 'LOCK'), JSON.stringify({ token: 'dead', pid: 1, host: hostname(), purpose: 'compact', since: '', beat: 3, boot, socket: '.LOCK.dead.sock' }));
    expect((await compactLogs({ source: 'edgeLogs', inputs: tmp.path('lock-stale', 'a.ndjson'), outDir: out })).rows).toBe(5);
  });
});

describe('Postgres\'s log in row groups of 32,768 events (docs/performance.md, "Studio\'s Postgres list in smaller row groups")', () => {
  const tmp = tempDir('le-postgres-groups-');
  afterAll(() => tmp.cleanup());

  it('writes a day of it in groups of 32,768 rows, the newest first, so the last hour is read from one group', async () => {
    const day = Date.parse('2026-11-21T00:00:00Z');
    const events = Array.from({ length: 33_000 }, (_, i) => ({
      id: `pg-${i}`,
      timestamp: new Date(day + i * 2_000).toISOString(),
      event_message: `statement ${i}`,
      project: 'default',
      metadata: { host: 'db', parsed: { error_severity: i % 10 ? 'LOG' : 'ERROR', user_name: 'postgres' } },
    }));
    const outDir = tmp.path('dataset');
    await compactLogs({ source: 'postgresLogs', sourceDefinitions: SUPABASE_SOURCES, inputs: writeLines(tmp.path('pg.ndjson'), events), outDir });
    const [file] = [...readDatasetStateStable(outDir).files.keys()];
    const instance = await DuckDBInstance.create(':memory:');
    try {
      const connection = await instance.connect();
      const groups = (await connection.runAndReadAll(`SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${join(outDir, file!)}') ORDER BY 1`)).getRows();
      expect(groups.map(([, rows]) => Number(rows))).toEqual([32_768, 232]);
      const newest = (await connection.runAndReadAll(`SELECT max(timestamp)::VARCHAR FROM parquet_scan('${join(outDir, file!)}') WHERE file_row_number < 32768`)).getRows();
      expect(newest[0]![0]).toBe(new Date(day + 32_999 * 2_000).toISOString().slice(0, 19).replace('T', ' '));
      connection.closeSync();
    } finally {
      instance.closeSync();
    }
  });
});
