import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { compactLogs } from '../src/compaction/compact';
import { HeadTables } from '../src/engine/duckdb/head-tables';
import { findDefinition } from '../src/definitions/registry';
import { defineEndpoint, p, type Endpoints } from '../src/index';
import { newestFirstHeadsProblem, newestFirstOrderProblem, newestFirstTemplateProblem } from '../src/query/newest-first-shape';
import { neutralSqlParser } from '../src/query/sql-parser';
import { checkDefinitions } from '../src/query/check-definitions';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { endpointSet } from '../src/definitions/registry';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';
import { withParquetReads } from './support/parquet-reads';

const NOW = '2026-11-22T12:00:00Z';
const DAYS = ['2026-11-20', '2026-11-21'];
const ORDER = { limit: 'limit', until: 'until' };

// A newest-first endpoint of a user's whose filter reads a field (the message): its newest rows
// are not among each file's newest rows, so the compacted files' heads must not stand in for the
// files (docs/definitions.md, "Newest first").
const errorsFirst = defineEndpoint({
  name: 'logs.errors',
  params: { project: p.text() },
  sql: {
    duckdb: `WITH edge_logs AS (
               SELECT id, timestamp, event_message FROM edge_logs
               WHERE project = $project AND ($until IS NULL OR timestamp <= $until) AND event_message LIKE 'ERR%'
             )
             SELECT id, timestamp, event_message FROM edge_logs ORDER BY timestamp DESC, id LIMIT $limit`,
  },
  sourceTables: { duckdb: "SELECT * FROM source_rows WHERE project_column = $project AND ($until IS NULL OR timestamp <= $until) AND event_message LIKE 'ERR%'" },
  bind: () => ({ limit: 100, until: null }),
  newestFirst: { limit: 'limit', until: 'until' },
  sandboxable: true,
  columns: { id: { type: 'text', nullable: true }, timestamp: { type: 'timestamp' }, event_message: { type: 'text', nullable: true } },
});

describe('a newest-first endpoint reads the heads only under a filter of the project and time bounds', () => {
  const tmp = tempDir('le-newest-heads-');
  let compacted: Endpoints;
  let whole: Endpoints;
  // What a request made ready for DuckDB (the Parquet paths of each set), and the days' heads it held.
  let reads: string[][] = [];
  let held = 0;

  beforeAll(async () => {
    // 300 events a day of one project; the day's 10 oldest are errors, far from its 100 newest.
    const events = DAYS.flatMap((day) =>
      Array.from({ length: 300 }, (_, i) =>
        edgeEvent({
          id: `${day}-${String(i).padStart(3, '0')}`,
          project: 'p',
          timestamp: new Date(Date.parse(`${day}T01:00:00Z`) + i * 60_000).toISOString(),
          message: i < 10 ? `ERR ${i}` : undefined,
        }),
      ),
    );
    writeLines(tmp.path('ndjson', 'all.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: tmp.path('dataset') });
    const open = async (sources: string) => (await endpointsAt({ edgeLogs: sources }, NOW, { endpoints: [errorsFirst], sandboxable: ['logs.all', 'logs.errors'], tierWindow: false })).ep;
    compacted = await open(tmp.path('dataset'));
    whole = await open(tmp.path('ndjson', 'all.ndjson'));
  });
  afterAll(async () => {
    await compacted.close();
    await whole.close();
    tmp.cleanup();
  });
  afterEach(() => vi.restoreAllMocks());

  const ask = async (ep: Endpoints, name: string, sql?: string) => {
    held = 0;
    const hold = HeadTables.prototype.hold;
    vi.spyOn(HeadTables.prototype, 'hold').mockImplementation(function (this: HeadTables, ...args: Parameters<HeadTables['hold']>) {
      held++;
      return hold.apply(this, args);
    });
    try {
      const asked = await withParquetReads(() => ep.query(name, { project: 'p' }, sql === undefined ? {} : { sql }));
      reads = asked.reads;
      return asked.result.result as Array<Record<string, unknown>>;
    } finally {
      vi.restoreAllMocks();
    }
  };
  const readsHeads = () => held > 0 || reads.some((set) => set.some((path) => path.includes('/_heads/')));

  it("walks logs.all's days over their heads (its filter is the project and the time bounds)", async () => {
    const rows = await ask(compacted, 'logs.all');
    expect(readsHeads()).toBe(true);
    expect(rows).toEqual(await ask(whole, 'logs.all'));
    expect(rows).toHaveLength(100);
  });

  it("walks a statement filtering on another field over its files, and finds its rows older than each file's head", async () => {
    const rows = await ask(compacted, 'logs.errors');
    expect(readsHeads()).toBe(false);
    expect(rows).toEqual(await ask(whole, 'logs.errors'));
    expect(rows.map((r) => r.event_message)).toEqual([...Array.from({ length: 10 }, (_, i) => `ERR ${9 - i}`), ...Array.from({ length: 10 }, (_, i) => `ERR ${9 - i}`)]);
  });

  it("reads a caller's newest rows from the heads under logs.all's template, from the files under one filtering on another field", async () => {
    const sql = 'select id, event_message from (select * from edge_logs order by timestamp desc nulls last limit 50) as e order by e.timestamp desc, id';
    const all = await ask(compacted, 'logs.all', sql);
    expect(readsHeads()).toBe(true);
    expect(all).toEqual(await ask(whole, 'logs.all', sql));
    const errors = await ask(compacted, 'logs.errors', sql);
    expect(readsHeads()).toBe(false);
    expect(errors).toEqual(await ask(whole, 'logs.errors', sql));
    expect(errors).toHaveLength(20);
  });

  it('refuses at start a statement declared newest first that is not ordered by timestamp descending and limited by its limit', async () => {
    for (const order of ['ORDER BY id LIMIT $limit', 'ORDER BY timestamp ASC LIMIT $limit', 'ORDER BY timestamp DESC LIMIT 10', 'ORDER BY timestamp DESC LIMIT $limit OFFSET 5']) {
      const byId = defineEndpoint({
        name: 'logs.misdeclared',
        params: { project: p.text() },
        sql: { duckdb: `SELECT id, timestamp FROM edge_logs WHERE project = $project AND ($until IS NULL OR timestamp <= $until) ${order}` },
        bind: () => ({ limit: 100, until: null }),
        newestFirst: { limit: 'limit', until: 'until' },
        columns: { id: { type: 'text', nullable: true }, timestamp: { type: 'timestamp' } },
      });
      await expect(endpointsAt({ edgeLogs: tmp.path('dataset') }, NOW, { endpoints: [byId] }), order).rejects.toMatchObject({
        code: 'invalid_option',
        option: 'endpoints["logs.misdeclared"].newestFirst',
      });
    }
  });
});

describe('the hour counts under a source-table template', () => {
  // A caller's chart is given the hour counts of whole hours inside the bounds the engine is told
  // (`notBefore`, `newestFirst.until`): a template bounding its rows by another parameter would
  // keep rows of hours the engine counts whole (docs/definitions.md, "Typed fields").
  it('are allowed where the template names only the project parameter, notBefore and until, from its parse tree', async () => {
    const otherBound = defineEndpoint({
      name: 'logs.other-bound',
      params: { project: p.text() },
      sql: findDefinition('logs.all').sql,
      sourceTables: { duckdb: 'SELECT * FROM source_rows WHERE project_column = $project AND timestamp > $after AND timestamp >= $since AND ($until IS NULL OR timestamp <= $until) -- $limit' },
      bind: () => ({ after: null, since: null, until: null, limit: 100, project_tier: null }),
      projectParam: 'project',
      notBefore: 'after',
      newestFirst: { limit: 'limit', until: 'until' },
      columns: { id: { type: 'text', nullable: true }, timestamp: { type: 'timestamp' }, event_message: { type: 'text', nullable: true }, metadata: { type: 'json', nullable: true } },
    });
    const heads = await checkDefinitions(
      endpointSet([otherBound]),
      { dialect: 'duckdb' },
      {
        sources: BUILT_IN_SOURCE_SET,
        parser: neutralSqlParser,
        callers: new CallerSqlCheck({ dialect: 'duckdb' }, neutralSqlParser),
        sandboxable: new Set(),
      },
    );
    // Its filter is bounds alone (the heads serve), but `$since` is a bound the engine is not told of;
    // the `$limit` in a comment is no parameter.
    expect(heads.get('logs.other-bound')).toEqual({ statement: true, sourceTables: true, hourCounts: false });
    expect(heads.get('logs.all')).toEqual({ statement: true, sourceTables: true, hourCounts: true });
  });
});

describe("a newest-first statement's shape, from DuckDB's parse tree", () => {
  const parsed = async (sql: string) => ({ json: await neutralSqlParser.serialize(sql) });
  const heads = async (sql: string) => newestFirstHeadsProblem(await parsed(sql), ORDER, ['project']);
  const template = async (sql: string) => newestFirstTemplateProblem(await parsed(sql), ORDER);
  const newest = (where: string) => `SELECT id, timestamp FROM edge_logs WHERE ${where} ORDER BY timestamp DESC, id LIMIT $limit`;

  it("lets logs.all's statement and template read the heads", async () => {
    const logsAll = findDefinition('logs.all');
    expect(newestFirstOrderProblem(await parsed(logsAll.sql.duckdb), ORDER)).toBeNull();
    expect(await heads(logsAll.sql.duckdb)).toBeNull();
    expect(await template(logsAll.sourceTables!.duckdb)).toBeNull();
  });

  it('takes bounds on the project and the time, either way round, alone or unless their parameter is NULL', async () => {
    for (const where of [
      'project = $project AND timestamp > $after AND timestamp <= $until',
      "$project = project AND $after < timestamp AND timestamp >= $now - INTERVAL 1 DAY AND timestamp > '2026-01-01' AND $until >= timestamp",
      '($project IS NULL OR project = $project) AND (($after IS NULL OR timestamp > $after) AND ($until IS NULL OR timestamp < $until))',
      'timestamp <= CAST($until AS TIMESTAMP)',
    ])
      expect(await heads(newest(where)), where).toBeNull();
    expect(await heads('SELECT * FROM edge_logs ORDER BY timestamp DESC LIMIT $limit')).toBeNull();
  });

  it('leaves the heads out for any other filter or SELECT', async () => {
    const cases: Array<[string, RegExp]> = [
      [newest("event_message LIKE 'ERR%'"), /reads event_message/],
      [newest("project = $project AND metadata->>'level' = 'error'"), /reads metadata/],
      [newest('project = $project OR timestamp > $after'), /OR that is not/],
      [newest('($after IS NULL OR timestamp > $other)'), /OR that is not/],
      [newest('timestamp < $now'), /from above by something other than \$until/],
      [newest('timestamp BETWEEN $after AND $until'), /something other than bounds/],
      [newest('project <> $project'), /something other than bounds/],
      [newest('project > $project'), /other than by =/],
      [newest('timestamp > id'), /another column/],
      [newest('timestamp > (SELECT max(timestamp) FROM edge_logs)'), /subquery/],
      [newest('NOT (timestamp > $after)'), /from above by something other than \$until/],
      [newest('timestamp > $after IS NOT NULL'), /something other than bounds/],
      ['SELECT e.id, e.timestamp FROM edge_logs e JOIN auth_logs a ON e.id = a.id ORDER BY e.timestamp DESC LIMIT $limit', /one table/],
      ['SELECT id, max(timestamp) AS timestamp FROM edge_logs GROUP BY id ORDER BY timestamp DESC LIMIT $limit', /groups/],
      ['SELECT id, timestamp, upper(event_message) AS m FROM edge_logs ORDER BY timestamp DESC LIMIT $limit', /lists something other than columns/],
      ['WITH e AS (SELECT * FROM edge_logs ORDER BY timestamp DESC LIMIT 5) SELECT * FROM e ORDER BY timestamp DESC LIMIT $limit', /CTE/],
      ["WITH e AS (SELECT * FROM edge_logs WHERE event_message = 'x') SELECT * FROM e ORDER BY timestamp DESC LIMIT $limit", /reads event_message/],
    ];
    for (const [sql, why] of cases) expect(await heads(sql), sql).toMatch(why);
    expect(await template('SELECT * FROM source_rows WHERE project_column = $project AND status_code >= 500')).toMatch(/reads status_code/);
    expect(await template('SELECT id, timestamp FROM source_rows')).toMatch(/not SELECT \* FROM source_rows/);
  });
});
