import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { compactLogs } from '../src/compaction/compact';
import { timestampOrderOnly } from '../src/engine/duckdb/two-phase-newest';
import { findDefinition } from '../src/definitions/registry';
import { defineEndpoint, p, type Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

describe('the first phase of an older page orders by timestamp alone', () => {
  it("rewrites logs.all's order, keeping every filter of the statement", () => {
    const sql = findDefinition('logs.all').sql.duckdb;
    const first = timestampOrderOnly(sql, 'limit');
    expect(first).toMatch(/ORDER BY timestamp DESC LIMIT \$limit$/);
    expect(first).not.toMatch(/id ASC/);
    // Everything before the order is the statement's own text.
    expect(first.slice(0, first.lastIndexOf('ORDER BY'))).toBe(sql.slice(0, sql.lastIndexOf('ORDER BY')));
  });

  it('leaves a statement as it is unless it ends with the newest-first order and its limit', () => {
    for (const [sql, limit] of [
      ['SELECT * FROM edge_logs ORDER BY timestamp DESC, id DESC LIMIT $limit', 'limit'],
      ['SELECT * FROM edge_logs ORDER BY timestamp DESC, id LIMIT $other', 'limit'],
      ['SELECT * FROM edge_logs ORDER BY timestamp DESC, id LIMIT 100', 'limit'],
      ['SELECT * FROM edge_logs ORDER BY timestamp DESC, id LIMIT $limit OFFSET 5', 'limit'],
      ["SELECT 'ORDER BY timestamp DESC, id LIMIT $limit'", 'limit'],
      ['SELECT * FROM edge_logs -- ORDER BY timestamp DESC, id LIMIT $limit', 'limit'],
    ] as const)
      expect(timestampOrderOnly(sql, limit), sql).toBe(sql);
    expect(timestampOrderOnly('SELECT * FROM t\norder by timestamp desc , id asc nulls last\nlimit $n;\n', 'n')).toBe('SELECT * FROM t\nORDER BY timestamp DESC LIMIT $n');
  });
});

/**
 * Older pages (`iso_timestamp_end` inside a compacted day) read in two phases over small row
 * groups: the answers must be those of the same events read whole, bounds on ties that straddle
 * row groups included.
 */
describe('logs.all older pages over a compacted day in small row groups', () => {
  const tmp = tempDir('le-pages-');
  let whole: Endpoints;
  let compacted: Endpoints;
  const DAY_START = Date.parse('2026-11-20T00:00:00Z');
  const TIE = '2026-11-20T11:00:00.000000Z';
  // A statement of the user's: newest-first, with a filter of its final SELECT the relation's CTE does not have.
  const getsOnly = defineEndpoint({
    name: 'logs.gets',
    params: { project: p.text(), until: p.isoTimestamp() },
    sql: {
      duckdb: `SELECT id, timestamp FROM edge_logs
               WHERE project = $project AND timestamp > $after AND timestamp <= $end AND event_message LIKE 'GET%'
               ORDER BY timestamp DESC, id LIMIT $limit`,
    },
    bind: ({ until }) => ({ after: { timestamp: BigInt(DAY_START - 86_400_000) * 1000n }, end: { timestamp: BigInt(Date.parse(until as string)) * 1000n }, limit: 100 }),
    notBefore: 'after',
    newestFirst: { limit: 'limit', until: 'end' },
    columns: { id: { type: 'text', nullable: true }, timestamp: { type: 'timestamp' } },
  });

  beforeAll(async () => {
    const events: object[] = [];
    for (let i = 0; i < 30_000; i++) {
      // 'busy' fills several row groups of the day; every third event shares its second with two others.
      const t = new Date(DAY_START + 86_399_000 - Math.floor(i / 3) * 8_000).toISOString();
      events.push(edgeEvent({ id: `b-${(i * 7919) % 30_000}`, project: i % 10 === 0 ? 'quiet' : 'busy', timestamp: t, message: i % 4 === 0 ? `POST | 200 | x` : undefined }));
    }
    // 250 events at one instant, ids out of order: a page bound on them cuts a tie longer than a page.
    for (let i = 0; i < 250; i++) events.push(edgeEvent({ id: `tie-${(i * 37) % 250}`, project: 'busy', timestamp: TIE }));
    writeLines(tmp.path('ndjson', 'day.ndjson'), events);
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'day.ndjson'), outDir: tmp.path('dataset') });
    ({ ep: whole } = await endpointsAt({ edgeLogs: tmp.path('ndjson', 'day.ndjson') }, NOW, { endpoints: [getsOnly] }));
    ({ ep: compacted } = await endpointsAt({ edgeLogs: tmp.path('dataset') }, NOW, { endpoints: [getsOnly] }));
  });
  afterAll(async () => {
    await whole.close();
    await compacted.close();
    tmp.cleanup();
  });

  it('writes the gateway log in row groups of about 8k rows (docs/performance.md, "Layout advice")', async () => {
    const day = tmp.path('dataset', 'date=2026-11-20');
    const [file] = readdirSync(day).filter((f) => f.endsWith('.parquet'));
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const reader = await connection.runAndReadAll(`SELECT row_group_id, any_value(row_group_num_rows) AS n FROM parquet_metadata('${join(day, file!)}') GROUP BY 1`);
      const sizes = reader.getRowObjects().map((r) => Number(r.n));
      // DuckDB's parallel writer rounds a group to whole vectors of 2,048 rows: at most 10,240.
      expect(sizes.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(10_240);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it('answers every page as the whole read does, ties at the bound included', async () => {
    const ends = [
      TIE,
      '2026-11-20T11:00:00.000001Z',
      '2026-11-20T10:59:59.999999Z',
      '2026-11-20T23:59:59Z',
      '2026-11-20T20:00:00Z',
      '2026-11-20T15:35:12.5Z',
      '2026-11-20T07:00:00Z',
      '2026-11-20T02:00:00Z',
    ];
    for (const project of ['busy', 'quiet']) {
      for (const iso_timestamp_end of ends) {
        const params = { project, project_tier: 'PRO', iso_timestamp_end };
        const rows = await compacted.logsAll(params);
        expect(rows, JSON.stringify(params)).toEqual(await whole.logsAll(params));
        expect(rows.length).toBeGreaterThan(0);
      }
    }
    const onTie = await compacted.logsAll({ project: 'busy', project_tier: 'PRO', iso_timestamp_end: TIE });
    expect(onTie).toHaveLength(100);
    expect(onTie.map((r) => r.id)).toEqual(
      Array.from({ length: 250 }, (_, i) => `tie-${i}`)
        .sort()
        .slice(0, 100),
    );
  });

  it("keeps the filters of a newest-first statement's own SELECT in its first phase", async () => {
    for (const until of [TIE, '2026-11-20T18:00:00Z', '2026-11-20T03:33:33Z']) {
      const rows = await compacted.query('logs.gets', { project: 'busy', until });
      expect(rows.result, until).toEqual((await whole.query('logs.gets', { project: 'busy', until })).result);
      expect(rows.result).toHaveLength(100);
    }
  });
});
