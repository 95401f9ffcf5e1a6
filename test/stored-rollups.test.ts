import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactLogs, createEndpoints, defineEndpoint, defineSource, p, type Endpoints } from '../src/index';
import { appendCommit, readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { dataPathOfRollup, rollupPathOf } from '../src/dataset/stored-rollups';
import { fullQuerySql } from '../src/engine/duckdb/statement-sql';
import { compiledStatement } from '../src/query/statement-reads';
import { openDatabase } from '../src/duckdb/open-database';
import type { SourceFiles } from '../src/duckdb/source-relations';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';
import { HANG_MS } from './support/hang-guard';
import { fileCrc32 } from '../src/util/crc32';
import { BUILT_IN_SOURCE_SET, edgeLogs } from '../src/sources/built-ins';

// Rollups stored at compaction beside each data file, read by the engine in place of computing
// them, and the rule that runs a rollup variant only where they are stored (docs/definitions.md,
// "Rollups").

const NOW = '2026-11-21T12:00:00Z';

const gateLogs = defineSource({
  name: 'storedGateLogs',
  relation: 'stored_gate_logs',
  logflare: { names: ['stored.gate.logs.test'] },
  columns: { project: 'text', status: { type: 'integer', path: '$.status' } },
  projectColumn: 'project',
  looksLike: (event) => typeof event.project === 'string',
  rollups: {
    stored_gate_logs_hourly: {
      sql: `SELECT date_trunc('hour', timestamp) AS hour, project, count(*) AS count,
                   count(*) FILTER (WHERE status >= 500) AS errors
            FROM stored_gate_logs GROUP BY ALL ORDER BY project, hour`,
    },
  },
});

/** Says which statement answered (`via`): the variant over the rollup, or the base statement. */
const gateErrors = defineEndpoint({
  name: 'stored-gate.errors',
  params: { project: p.text() },
  sql: {
    duckdb: `SELECT 'raw' AS via, date_trunc('hour', timestamp) AS hour, count(*) AS count, count(*) FILTER (WHERE status >= 500) AS errors
             FROM stored_gate_logs WHERE project = $project GROUP BY 2 ORDER BY 2`,
  },
  variants: {
    rollup: {
      duckdb: `SELECT 'rollup' AS via, hour, sum(count) AS count, sum(errors) AS errors
               FROM stored_gate_logs_hourly WHERE project = $project GROUP BY 2 ORDER BY 2`,
    },
  },
  variant: () => 'rollup',
  columns: { via: 'text', hour: 'timestamp', count: 'integer', errors: 'integer' },
});

const gate = (ts: string, status: number, project = 'abc') => ({ id: `${ts}-${status}-${project}`, timestamp: ts, event_message: 'x', project, metadata: { status } });

const EXPECTED = [
  { hour: '2026-11-20T10:00:00.000000Z', count: 2, errors: 1 },
  { hour: '2026-11-21T10:00:00.000000Z', count: 3, errors: 2 },
  { hour: '2026-11-21T11:00:00.000000Z', count: 2, errors: 1 },
];

describe('stored rollups and the rule that chooses a rollup variant', () => {
  const tmp = tempDir();
  const out = tmp.path('parquet');
  let ep: Endpoints<typeof gateErrors>;
  const ask = async () => {
    const rows = (await ep.query('stored-gate.errors', { project: 'abc' })).result as Array<Record<string, unknown>>;
    const via = [...new Set(rows.map((r) => r.via))];
    return { via: via.length === 1 ? via[0] : via, rows: rows.map(({ via: _via, ...rest }) => rest) };
  };
  const compact = (glob: string) => compactLogs({ source: 'storedGateLogs', sourceDefinitions: [gateLogs], inputs: tmp.path('gate', glob), outDir: out });

  beforeAll(async () => {
    writeLines(tmp.path('gate', 'a.ndjson'), [gate('2026-11-20T10:05:00Z', 200), gate('2026-11-20T10:35:00Z', 503), gate('2026-11-21T10:05:00Z', 200, 'other')]);
    writeLines(tmp.path('gate', 'b.ndjson'), [gate('2026-11-21T10:05:00Z', 200), gate('2026-11-21T10:35:00Z', 503), gate('2026-11-21T11:10:00Z', 500)]);
    writeLines(tmp.path('gate', 'c.ndjson'), [gate('2026-11-21T10:50:00Z', 502), gate('2026-11-21T11:20:00Z', 200)]);
    ep = await createEndpoints({
      sources: { storedGateLogs: [tmp.path('gate', '*.ndjson'), out] },
      sourceDefinitions: [gateLogs],
      endpoints: [gateErrors],
      now: () => new Date(NOW),
      cache: false,
    });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  it('answers the same in every state of the data (NDJSON only, partly and fully compacted, a damaged rollup, a dataset from before, an orphan), reading the rollup only where every Parquet file stores it', async () => {
    // NDJSON only: nothing stored, the base statement answers (computing the rollup would be slower).
    expect(await ask()).toEqual({ via: 'raw', rows: EXPECTED });

    // Partly compacted: the Parquet files store their rollups; the NDJSON rest is computed.
    const first = await compact('[ab].ndjson');
    expect(first.files.length).toBe(2);
    for (const file of readDatasetStateStable(out).files.values()) {
      const stored = file.rollups?.stored_gate_logs_hourly;
      expect(stored?.path).toBe(rollupPathOf(file.path, 'stored_gate_logs_hourly'));
      expect(statSync(join(out, stored!.path)).size).toBe(stored!.bytes);
      expect(dataPathOfRollup(stored!.path)).toEqual({ data: file.path, rollup: 'stored_gate_logs_hourly' });
    }
    expect(await ask()).toEqual({ via: 'rollup', rows: EXPECTED });

    // Fully compacted.
    await compact('*.ndjson');
    expect(await ask()).toEqual({ via: 'rollup', rows: EXPECTED });

    // A damaged stored rollup is left aside: the base statement answers.
    const state = readDatasetStateStable(out);
    const [victim] = [...state.files.values()];
    const path = join(out, victim!.rollups!.stored_gate_logs_hourly!.path);
    const saved = `${path}.saved`;
    renameSync(path, saved);
    // Cut short (a version of its own: a reader's verdict on a file version is kept).
    writeFileSync(path, readFileSync(saved).subarray(0, 100));
    expect(await ask()).toEqual({ via: 'raw', rows: EXPECTED });
    renameSync(saved, path);

    // A dataset compacted before rollups were stored: its entries name none.
    const bare: DataFile[] = [...state.files.values()].map(({ rollups: _r, ...f }) => f);
    expect(await appendCommit(state, { source: 'storedGateLogs', add: bare, remove: [], inputs: [] })).toBe(true);
    expect(await ask()).toEqual({ via: 'raw', rows: EXPECTED });

    // compact with no new input writes them (their old files are orphans now, removed first).
    const backfill = await compactLogs({ source: 'storedGateLogs', sourceDefinitions: [gateLogs], inputs: tmp.path('gate', 'none-*.ndjson'), outDir: out });
    expect(backfill.backfilledFiles?.sort()).toEqual(bare.map((f) => f.path).sort());
    expect(await ask()).toEqual({ via: 'rollup', rows: EXPECTED });
    const seq = readDatasetStateStable(out).seq;
    const again = await compactLogs({ source: 'storedGateLogs', sourceDefinitions: [gateLogs], inputs: tmp.path('gate', 'none-*.ndjson'), outDir: out });
    expect(again.backfilledFiles).toBeUndefined();
    expect(readDatasetStateStable(out).seq).toBe(seq);

    // A stored rollup no commit names (a run killed before its commit) is never read, and the next run removes it.
    const [file] = [...readDatasetStateStable(out).files.values()];
    const stray = join(out, rollupPathOf(file!.path.replace(/part-[0-9a-f]+-/, 'part-00000000deadbeef-'), 'stored_gate_logs_hourly'));
    mkdirSync(join(stray, '..'), { recursive: true });
    // A copy of a real one: read, it would count its rows twice.
    writeFileSync(stray, readFileSync(join(out, file!.rollups!.stored_gate_logs_hourly!.path)));
    expect(await ask()).toEqual({ via: 'rollup', rows: EXPECTED });
    const run = await compactLogs({ source: 'storedGateLogs', sourceDefinitions: [gateLogs], inputs: tmp.path('gate', 'none-*.ndjson'), outDir: out });
    expect(run.orphans?.deleted).toContain(stray.slice(out.length + 1));
    expect(existsSync(stray)).toBe(false);
  });
});

describe('the built-in endpoints over stored rollups', () => {
  const tmp = tempDir();
  const REFS = ['aaaabbbbccccddddeeee', 'ffffgggghhhhiiiijjjj'];
  const PATHS = ['/rest/v1/todos', '/storage/v1/object/a.png', '/auth/v1/token', '/realtime/v1/websocket', '/functions/v1/hi'];
  const INVOCATION = ['1day', '7day', '1hr', '5min'] as const;
  const USAGE = ['hourly', 'daily', '3hr', '1day', '7day'] as const;

  beforeAll(() => {
    const base = Date.parse('2026-11-14T00:00:00Z');
    const edge: object[] = [];
    const fns: object[] = [];
    for (let i = 0; i < 1200; i++) {
      const ref = REFS[i % 2]!;
      const at = new Date(base + ((i * 617) % (7.5 * 24 * 60)) * 60_000 + (i % 50) * 1000).toISOString();
      const path = PATHS[i % PATHS.length]!;
      edge.push(edgeEvent({ project: ref, timestamp: at, path, url: `https://${ref}.supabase.co${path}` }));
      fns.push(functionEvent({ project: ref, timestamp: at, ms: (i * 37) % 900, status: i % 9 === 0 ? 500 : 200 }));
    }
    // Two files a source: one is compacted in the partial state.
    writeLines(tmp.path('edge', 'a.ndjson'), edge.slice(0, 800));
    writeLines(tmp.path('edge', 'b.ndjson'), edge.slice(800));
    writeLines(tmp.path('fn', 'a.ndjson'), fns.slice(0, 800));
    writeLines(tmp.path('fn', 'b.ndjson'), fns.slice(800));
  });
  afterAll(() => tmp.cleanup());

  const answers = async () => {
    const { ep } = await endpointsAt(
      {
        edgeLogs: [tmp.path('edge', '*.ndjson'), tmp.path('edge-parquet')],
        functionEdgeLogs: [tmp.path('fn', '*.ndjson'), tmp.path('fn-parquet')],
      },
      NOW,
    );
    try {
      const out: Record<string, unknown> = {};
      for (const interval of INVOCATION) {
        for (const project of REFS) out[`fn ${interval} ${project}`] = (await ep.query('functions.invocation-stats', { project, interval })).result;
      }
      for (const interval of USAGE) {
        // Twice each: the second call binds the trigram maps' candidate origins kept by the first (narrowed-rollups.ts).
        for (const project of [REFS[0]!, `${REFS[1]}\\.supabase`, 'supabase\\.co/rest', 'no-such-text']) {
          const first = (await ep.query('usage.api-counts', { project, interval })).result;
          expect((await ep.query('usage.api-counts', { project, interval })).result).toEqual(first);
          out[`usage ${interval} ${project}`] = first;
        }
      }
      return out;
    } finally {
      await ep.close();
    }
  };

  it('answer over NDJSON only, partly compacted and fully compacted exactly as over the raw events', async () => {
    const raw = await answers();
    expect(Object.values(raw).some((rows) => (rows as unknown[]).length > 0)).toBe(true);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('edge', 'a.ndjson'), outDir: tmp.path('edge-parquet') });
    await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('fn', 'a.ndjson'), outDir: tmp.path('fn-parquet') });
    expect(await answers()).toEqual(raw);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('edge', '*.ndjson'), outDir: tmp.path('edge-parquet'), deleteSource: true });
    await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('fn', '*.ndjson'), outDir: tmp.path('fn-parquet'), deleteSource: true });
    expect(readdirSync(tmp.path('fn-parquet', '_rollups')).sort()).toEqual([
      'function_edge_logs_daily_summary',
      'function_edge_logs_hourly',
      'function_edge_logs_summary',
      'function_edge_logs_typed_hourly',
    ]);
    expect(await answers()).toEqual(raw);
  });
});

describe("the edge functions' quantile summaries as stored", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  // A project's query decodes only the row groups of its own values (docs/performance.md, "A
  // project's quantile summaries read alone"): the summary rollup is stored a value per row,
  // sorted by project, so no two row groups share a project but at their boundary.
  it('are a value per row, sorted by project, in row groups of 8,192: each holds a range of projects the next one starts after', async () => {
    const projects = ['cccc', 'aaaa', 'dddd', 'bbbb'];
    const base = Date.parse('2026-11-20T00:00:00Z');
    const events = projects.flatMap((project, k) =>
      Array.from({ length: 6000 }, (_, i) => functionEvent({ project, timestamp: new Date(base + ((i * 7 + k) % 1440) * 60_000).toISOString(), ms: (i * 13) % 500 })),
    );
    writeLines(tmp.path('fn.ndjson'), events);
    await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('fn.ndjson'), outDir: tmp.path('fn') });
    const [file] = [...readDatasetStateStable(tmp.path('fn')).files.values()];
    const summary = join(tmp.path('fn'), file!.rollups!.function_edge_logs_summary!.path);
    const db = await openDatabase();
    try {
      const groups = (
        await db.connection.runAndReadAll(
          `SELECT row_group_id, stats_min_value, stats_max_value, row_group_num_rows FROM parquet_metadata('${summary}') WHERE path_in_schema = 'project_ref' ORDER BY row_group_id`,
        )
      ).getRows();
      const rows = Number((await db.connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${summary}')`)).getRows()[0]![0]);
      // Every value is kept (fewer than 400 a group): 24,000 rows in groups of 8,192, every one but
      // the last full (each group skipped costs a query time of its own; smaller ones cost more).
      // DuckDB's writer may round a group up to whole vectors of 2,048 rows: at most 10,240.
      expect(rows).toBe(24000);
      const sizes = groups.map((g) => Number(g[3]));
      expect(sizes.length).toBeGreaterThanOrEqual(2);
      for (const size of sizes.slice(0, -1)) {
        expect(size).toBeGreaterThanOrEqual(8192);
        expect(size).toBeLessThanOrEqual(10240);
      }
      for (let g = 1; g < groups.length; g++) expect(String(groups[g]![1]) >= String(groups[g - 1]![2])).toBe(true);
    } finally {
      await db.close();
    }
  });
});

describe('what is not stored', () => {
  it("is computed by the rollup's cheaper SQL when it declares one: the trigram map of an uncompacted tail is NULL, not computed", () => {
    const files = {
      ndjson: ['tail.ndjson'],
      parquet: ['date=2026-11-21/a.parquet'],
      parquetTypes: new Map<string, string>(),
      stored: { edge_logs_url_grams: { companions: ['_rollups/edge_logs_url_grams/date=2026-11-21/a.parquet'], dataFiles: ['date=2026-11-21/a.parquet'] } },
    };
    const sql = fullQuerySql(compiledStatement('SELECT origin FROM edge_logs_url_grams', BUILT_IN_SOURCE_SET), new Map([[edgeLogs, files]]));
    const [stored, rest] = sql.split('UNION ALL BY NAME');
    expect(stored).toContain("read_parquet(['_rollups/edge_logs_url_grams/date=2026-11-21/a.parquet'])");
    expect(rest).toContain('CAST(NULL AS BLOB)');
    expect(rest).not.toContain('bitstring_agg');
    // Nothing stored: the rollup's own SQL over everything (the variant then falls back anyway).
    expect(fullQuerySql(compiledStatement('SELECT origin FROM edge_logs_url_grams', BUILT_IN_SOURCE_SET), new Map([[edgeLogs, { ...files, stored: {} }]]))).toContain('bitstring_agg');
    // The source's relation only where something reads it: the statement, or a rollup computed
    // from it whole (a stored rollup's rest builds a relation of its own, inside its part).
    const relation = /^WITH edge_logs AS \(/;
    expect(sql).not.toMatch(relation);
    expect(fullQuerySql(compiledStatement('SELECT origin FROM edge_logs_url_grams', BUILT_IN_SOURCE_SET), new Map([[edgeLogs, { ...files, stored: {} }]]))).toMatch(relation);
    expect(fullQuerySql(compiledStatement('SELECT origin FROM edge_logs_url_grams, edge_logs', BUILT_IN_SOURCE_SET), new Map([[edgeLogs, files]]))).toMatch(relation);
  });

  it('leaves a rollup the columns of its SQL and its rest whatever is stored: a statement binds on every state of the data', async () => {
    const tmp = tempDir();
    const { instance, connection } = await openDatabase({ threads: 1 });
    try {
      const url = 'https://aaaabbbbccccddddeeee.supabase.co/rest/v1/todos';
      writeLines(tmp.path('tail.ndjson'), [edgeEvent({ project: 'aaaabbbbccccddddeeee', timestamp: '2026-11-21T10:00:00Z', path: '/rest/v1/todos', url })]);
      const companion = tmp.path('grams.parquet');
      await connection.run(`COPY (SELECT 'stored.example' AS origin, '\\x01'::BLOB AS grams) TO '${companion}' (FORMAT parquet)`);
      const stored = { edge_logs_url_grams: { companions: [companion], dataFiles: [] } };
      const none = { ndjson: [], parquet: [], parquetTypes: new Map<string, string>() };
      const tail = { ...none, ndjson: [tmp.path('tail.ndjson')] };
      const rows = async (files: SourceFiles) =>
        (
          await connection.runAndReadAll(
            fullQuerySql(compiledStatement('SELECT origin, grams IS NULL AS no_map, request_url FROM edge_logs_url_grams ORDER BY origin', BUILT_IN_SOURCE_SET), new Map([[edgeLogs, files]])),
          )
        ).getRowObjectsJS();
      const ofTail = { origin: 'aaaabbbbccccddddeeee.supabase.co', no_map: true, request_url: url };
      const ofStored = { origin: 'stored.example', no_map: false, request_url: null };
      // Nothing stored (the rollup's SQL: a map, no URL), all stored, stored and an uncompacted tail.
      expect(await rows(tail)).toEqual([{ ...ofTail, no_map: false, request_url: null }]);
      expect(await rows({ ...none, stored })).toEqual([ofStored]);
      expect(await rows({ ...tail, stored })).toEqual([ofTail, ofStored]);
    } finally {
      connection.closeSync();
      instance.closeSync();
      tmp.cleanup();
    }
  });
});

describe('a changed rollup definition (docs/definitions.md, "Rollups")', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  const ROOT = fileURLToPath(new URL('..', import.meta.url));
  /** The endpoint's answer in a process of its own with version 1 or 2 of the rollup (and of the endpoint's base SQL). */
  const run = (version: 1 | 2, action: 'compact' | 'ask') =>
    new Promise<{ via: unknown; rows: unknown[] }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/rollup-definition-child.ts', String(version), action, tmp.path('gate', '*.ndjson'), tmp.path('parquet')], { cwd: ROOT });
      let out = '';
      let err = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (err += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS);
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(JSON.parse(out));
        else reject(new Error(`exit ${code}: ${err}`));
      });
    });

  it('is never read by the old numbers: the base statement answers until compaction computes it again', async () => {
    writeLines(tmp.path('gate', 'a.ndjson'), [gate('2026-11-21T10:05:00Z', 200), gate('2026-11-21T10:10:00Z', 404), gate('2026-11-21T10:35:00Z', 503), gate('2026-11-21T11:10:00Z', 500)]);
    const v1 = [
      { hour: '2026-11-21T10:00:00.000000Z', count: 3, errors: 1 },
      { hour: '2026-11-21T11:00:00.000000Z', count: 1, errors: 1 },
    ];
    const v2 = [
      { hour: '2026-11-21T10:00:00.000000Z', count: 3, errors: 2 },
      { hour: '2026-11-21T11:00:00.000000Z', count: 1, errors: 1 },
    ];
    // Compacted by version 1: its stored rollups answer.
    expect(await run(1, 'compact')).toEqual({ via: 'rollup', rows: v1 });
    // Version 2 never reads them: its own base statement answers, by its own rule.
    expect(await run(2, 'ask')).toEqual({ via: 'raw', rows: v2 });
    // Its compaction (no new input) computes them again by version 2: stored rollups answer again.
    expect(await run(2, 'compact')).toEqual({ via: 'rollup', rows: v2 });
    // And back: version 1 does not read version 2's.
    expect(await run(1, 'ask')).toEqual({ via: 'raw', rows: v1 });
  });
});

describe("the gateway's trigram maps kept per literal", () => {
  it('are tested again when a map is rewritten under the same path: a kept answer is never served for another version', async () => {
    const tmp = tempDir();
    const out = tmp.path('out');
    const ref = 'aaaabbbbccccddddeeee';
    const events = Array.from({ length: 40 }, (_, i) =>
      edgeEvent({ project: ref, timestamp: `2026-11-21T11:${String(i).padStart(2, '0')}:00Z`, path: '/rest/v1/todos', url: `https://${ref}.supabase.co/rest/v1/todos` }),
    );
    writeLines(tmp.path('edge', 'a.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('edge', 'a.ndjson'), outDir: out, deleteSource: true });
    const ep = await createEndpoints({ sources: { edgeLogs: out }, now: () => new Date(NOW), cache: false });
    const db = await openDatabase({});
    try {
      // A pattern, not plain text: its URLs are tested, from the candidate origins (a plain ref held
      // by the origin is counted from the origin rows, which no map narrows).
      const ask = async () => (await ep.query('usage.api-counts', { project: `${ref}(\\.|$)`, interval: 'hourly' })).result;
      const rows = await ask();
      expect(rows.length).toBeGreaterThan(0);
      // Kept: the same answer from the kept origins.
      expect(await ask()).toEqual(rows);
      // The map rewritten under its path with no trigram of the ref (only bit 0 set), its commit
      // recording the new bytes and CRC-32: the origin is no candidate of this version.
      const state = readDatasetStateStable(out);
      const [file] = [...state.files.values()];
      const map = file!.rollups!.edge_logs_url_grams!;
      const path = join(out, map.path);
      await db.connection.run(`COPY (SELECT origin, bitstring_agg(0, 0, 65535)::BLOB AS grams FROM read_parquet('${path}') GROUP BY origin) TO '${path}.new' (FORMAT parquet)`);
      renameSync(`${path}.new`, path);
      const rewritten = { ...file!, rollups: { ...file!.rollups, edge_logs_url_grams: { ...map, bytes: statSync(path).size, crc32: await fileCrc32(path) } } };
      expect(await appendCommit(state, { source: 'edgeLogs', add: [rewritten], remove: [], inputs: [] })).toBe(true);
      expect(await ask()).toEqual([]);
    } finally {
      await db.close();
      await ep.close();
      tmp.cleanup();
    }
  });
});
