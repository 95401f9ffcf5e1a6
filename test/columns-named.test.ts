import { describe, expect, it } from 'vitest';
import { columnsNamed } from '../src/sql/columns-named';
import { fullQuerySql } from '../src/engine/duckdb/statement-sql';
import { compiledStatement } from '../src/query/statement-reads';
import { findDefinition } from '../src/definitions/registry';
import { BUILT_IN_SOURCE_SET, edgeLogs } from '../src/sources/built-ins';
import { relationColumns, type SourceFiles } from '../src/duckdb/source-relations';
import { typedFieldsOf, withTypedPaths } from '../src/sources/typed-fields';
import type { SourceDescriptor } from '../src/sources/source-descriptor';
import { createEndpoints, defineEndpoint } from '../src/index';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// An endpoint's statement gets its source's relation with only the columns it names (DuckDB plans
// a narrower Parquet scan faster); a statement that may read a column without naming it gets them all.

const COLUMNS = relationColumns(edgeLogs).map(([name]) => name);

describe('columnsNamed: the columns of a relation a statement names', () => {
  it('finds bare and quoted names, in any case, wherever they are, but not parameters or text', () => {
    const named = columnsNamed(`SELECT ID, e.timestamp, "text:metadata.request.path" FROM edge_logs e WHERE project = $request_url AND event_message <> 'metadata' -- severity`, 'edge_logs', COLUMNS);
    expect([...named!].sort()).toEqual(['event_message', 'id', 'project', 'text:metadata.request.path', 'timestamp']);
  });

  it.each([
    ['SELECT * FROM edge_logs', 'a star'],
    ['SELECT e.* FROM edge_logs e', 'a qualified star'],
    ['SELECT id, * EXCLUDE (metadata) FROM edge_logs', 'a star after a column'],
    ["SELECT COLUMNS('^text:') FROM edge_logs", 'COLUMNS()'],
    ['SELECT id FROM edge_logs NATURAL JOIN other', 'a natural join'],
    ['SELECT edge_logs FROM edge_logs', 'the relation as a value'],
    ['FROM edge_logs WHERE id IS NOT NULL', 'a query that starts with FROM'],
    ['SELECT id FROM edge_logs UNION ALL FROM edge_logs', 'a FROM-first query after UNION'],
    ['WITH x AS (FROM edge_logs) SELECT id FROM x', 'a FROM-first CTE'],
    ['PIVOT edge_logs ON status_code USING count(*)', 'PIVOT'],
    ['SELECT to_json(e) FROM edge_logs AS e', 'an alias as a value'],
    ['SELECT id FROM edge_logs e, other WHERE e = other.x', 'an alias compared'],
    ['SELECT DISTINCT ON (project) * FROM edge_logs', 'a star after DISTINCT ON'],
    ['SELECT #2 FROM edge_logs', 'a column by its position'],
    ['SELECT (*) FROM edge_logs', 'a star in parentheses'],
    ['SELECT id, ( ( * ) ) FROM edge_logs', 'a star in parentheses after a column'],
    ['SELECT "e" FROM edge_logs e', 'a quoted alias as a value'],
    ['SELECT to_json("edge_logs") FROM edge_logs', 'the quoted relation as a value'],
    ['SELECT e FROM "edge_logs" e', 'the alias of a quoted relation as a value'],
    ['SELECT "my e" FROM edge_logs AS "my e"', 'an alias that is no bare word'],
    ['SELECT a FROM edge_logs e(a)', 'column aliases (they rename by position)'],
    ['SELECT x.b FROM other JOIN edge_logs AS x (a, b) ON true', 'column aliases in a join'],
  ])('gives none (every column) for %s: %s', (sql) => {
    expect(columnsNamed(sql, 'edge_logs', COLUMNS)).toBeNull();
  });

  it('reads a condition in parentheses after the relation as naming columns, not as column aliases', () => {
    expect([...columnsNamed('SELECT id FROM edge_logs WHERE (status_code > 1)', 'edge_logs', COLUMNS)!].sort()).toEqual(['id', 'status_code']);
  });

  it('reads a product, count(*), a CTE of the relation and an alias used as a qualifier as naming columns only', () => {
    const sql = `WITH edge_logs AS (SELECT id, timestamp FROM edge_logs WHERE status_code * 2 > 0 AND extract(year FROM timestamp) > 0)
      SELECT count(*), e.id FROM edge_logs AS e JOIN edge_logs_url_hourly h ON h.hour = e.timestamp`;
    expect([...columnsNamed(sql, 'edge_logs', COLUMNS)!].sort()).toEqual(['id', 'status_code', 'timestamp']);
  });

  it('reads quoted relations and aliases as bare ones: as qualifiers and where another range or an output is named so', () => {
    const sql = 'SELECT "T"."id", count(*) AS "n" FROM (SELECT "t"."id" FROM "edge_logs" AS "t" WHERE "t"."project" = $p) AS "t" GROUP BY 1';
    expect([...columnsNamed(sql, 'edge_logs', COLUMNS)!].sort()).toEqual(['id', 'project']);
    expect([...columnsNamed('SELECT count(*) e FROM edge_logs AS e', 'edge_logs', COLUMNS)!]).toEqual([]);
  });
});

describe("the engine's SQL of an endpoint's statement", () => {
  const parquetTypes = new Map(relationColumns(edgeLogs).map(([n, t]) => [n, t]));
  // A compacted day file holding every typed column, as its commit records them.
  const day: SourceFiles = { ndjson: [], parquet: ['day.parquet'], parquetTypes, typedFields: new Map([['day.parquet', typedFieldsOf(edgeLogs).map((f) => f.path)]]) };
  const sqlOf = (text: string, files: SourceFiles, caller?: string) => fullQuerySql(compiledStatement(text, BUILT_IN_SOURCE_SET), new Map([[edgeLogs, files]]), caller);
  const logsAll = findDefinition('logs.all').sql.duckdb;

  it("gives logs.all's Parquet scan only the columns it names", () => {
    const sql = sqlOf(logsAll, day);
    expect(/SELECT ([^\n]*) FROM read_parquet\(\['day\.parquet'\]/.exec(sql)![1]).toBe(
      '"id" AS id, "timestamp" AS timestamp, "event_message" AS event_message, "metadata" AS metadata, "project" AS project',
    );
    // The relation (before the statement, whose comments name every column).
    expect(sql.slice(0, sql.indexOf('SELECT * FROM ('))).not.toContain('request_url');
  });

  it('gives every other part (NDJSON, files without typed columns) the same columns, in the same order', () => {
    const sql = sqlOf(logsAll, { ndjson: ['a.ndjson'], parquet: ['old.parquet'], parquetTypes });
    expect(sql.split('SELECT id, timestamp, event_message, metadata, project FROM (').length - 1).toBe(2);
  });

  it('gives every column to a statement with a star and to a caller', () => {
    expect(sqlOf('SELECT * FROM edge_logs', day)).toContain('"request_url" AS request_url');
    expect(sqlOf('SELECT id FROM edge_logs', day, 'SELECT * FROM edge_logs')).toContain('"request_url" AS request_url');
  });

  it('computes a rollup that is not stored over the relation with only the columns its SQL names', () => {
    const usage = findDefinition('usage.api-counts').variants!.rollups!.duckdb;
    const stored = { companions: ['rollup.parquet'], dataFiles: ['day.parquet'] };
    // Every file's rollups stored: the trigram maps' rest is bound over no events for its columns.
    const sql = sqlOf(usage, { ...day, stored: { edge_logs_url_hourly: stored, edge_logs_url_grams: stored } });
    const rest = sql.slice(sql.indexOf('edge_logs_url_grams AS ('), sql.indexOf('required AS ('));
    expect(rest).toContain('CAST(NULL AS VARCHAR) AS request_url');
    expect(rest).not.toContain('AS metadata');
  });

  it('keeps a typed column the statement names for a source with that field, after one without it', () => {
    const text = 'SELECT "text:metadata.request.referer" AS referer FROM edge_logs';
    const wide = withTypedPaths(edgeLogs, ['request.referer']);
    const relationOf = (source: SourceDescriptor) => {
      const sql = fullQuerySql(compiledStatement(text, BUILT_IN_SOURCE_SET), new Map([[source, { ndjson: ['a.ndjson'], parquet: [], parquetTypes }]]));
      return sql.slice(0, sql.lastIndexOf('SELECT "text:metadata.request.referer" AS referer'));
    };
    expect(relationOf(edgeLogs)).not.toContain('AS "text:metadata.request.referer"');
    expect(relationOf(wide)).toContain('"text:metadata.request.referer" FROM (');
  });
});

describe("a definition's statement with column aliases on its source", () => {
  it('answers from the columns the aliases rename, as over the whole relation', async () => {
    const tmp = tempDir();
    writeLines(tmp.path('edge.ndjson'), [edgeEvent({ timestamp: '2026-11-20T10:00:00Z', id: 'e-1' }), edgeEvent({ timestamp: '2026-11-20T11:00:00Z', id: 'e-2' })]);
    // `a` is the relation's first column (id), `b` its second (timestamp): a relation cut to the
    // columns the text names would rename others.
    const renamed = defineEndpoint({
      name: 'renamed',
      sql: { duckdb: 'SELECT a, CAST(b AS VARCHAR) AS b FROM edge_logs e(a, b) ORDER BY a' },
      columns: { a: 'text', b: 'text' },
      cache: 'never',
    });
    const ep = await createEndpoints({ sources: { edgeLogs: tmp.path('edge.ndjson') }, endpoints: [renamed], now: () => new Date('2026-11-21T12:00:00Z'), cache: false });
    try {
      expect((await ep.query('renamed', {})).result).toEqual([
        { a: 'e-1', b: '2026-11-20 10:00:00' },
        { a: 'e-2', b: '2026-11-20 11:00:00' },
      ]);
    } finally {
      await ep.close();
      tmp.cleanup();
    }
  });
});
