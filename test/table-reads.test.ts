import { describe, expect, it } from 'vitest';
import { neutralSqlParser } from '../src/query/sql-parser';
import { mergeTableReads, tableReads } from '../src/sandbox/table-reads';

// What a caller's SELECT reads of the tables it may read, from DuckDB's parse tree: the names it
// gives, the tables it reads whole (a value, column aliases, a natural join, a position) and the
// tables a `*` selects from (docs/sandboxing.md, "Source tables").
const TABLES = ['edge_logs', 'postgres_logs'];
const readsOf = async (sql: string) => tableReads(JSON.parse(await neutralSqlParser.serialize(sql)).statements[0], TABLES);
const sorted = (set: ReadonlySet<string>) => [...set].sort();

describe('tableReads', () => {
  it('gives every part of every column reference, lower-cased, and not strings, comments or parameters', async () => {
    const reads = await readsOf(
      `SELECT ID, e."Timestamp", "text:metadata.request.path", metadata.request.path FROM edge_logs e WHERE project = $request_url AND event_message <> 'severity' -- appname`,
    );
    expect(sorted(reads.names)).toEqual(['e', 'event_message', 'id', 'metadata', 'path', 'project', 'request', 'text:metadata.request.path', 'timestamp']);
    expect(reads.whole.size + reads.starred.size).toBe(0);
  });

  it('gives the columns of USING, and reads count(*) and products as naming nothing', async () => {
    const reads = await readsOf('SELECT count(*), 2 * 3 FROM edge_logs JOIN postgres_logs USING (Id)');
    expect(sorted(reads.names)).toEqual(['id']);
    expect(reads.whole.size + reads.starred.size).toBe(0);
  });

  it.each([
    ['SELECT edge_logs FROM edge_logs', 'the table as a value'],
    ['SELECT to_json(e) FROM edge_logs AS e', 'an alias as a value'],
    ['SELECT "e" FROM edge_logs e', 'a quoted alias as a value'],
    ['SELECT "my e" FROM edge_logs AS "my e"', 'an alias that is no bare word'],
    ['SELECT id FROM edge_logs e, postgres_logs p WHERE e = p', 'an alias compared'],
    ['SELECT e FROM "EDGE_LOGS" e', 'the alias of a quoted table in another case'],
    ['SELECT a FROM edge_logs e(a)', 'column aliases'],
    ['SELECT id FROM edge_logs NATURAL JOIN postgres_logs', 'a natural join'],
    ['SELECT #2 FROM edge_logs', 'a column by its position'],
  ])('reads the table whole for %s: %s', async (sql) => {
    expect((await readsOf(sql)).whole.has('edge_logs')).toBe(true);
  });

  it.each([
    ['SELECT * FROM edge_logs', 'a star'],
    ['SELECT e.* FROM edge_logs e', 'a qualified star'],
    ['SELECT id, * EXCLUDE (metadata) FROM edge_logs', 'a star after a column'],
    ["SELECT COLUMNS('^text:') FROM edge_logs", 'COLUMNS()'],
    ['FROM edge_logs WHERE id IS NOT NULL', 'a query that starts with FROM'],
    ['SELECT id FROM edge_logs UNION ALL FROM edge_logs', 'a FROM-first query after UNION'],
    ['WITH x AS (FROM edge_logs) SELECT id FROM x', 'a FROM-first CTE'],
    ['SELECT DISTINCT ON (project) * FROM edge_logs', 'a star after DISTINCT ON'],
    ['SELECT (*) FROM edge_logs', 'a star in parentheses'],
    ['SELECT id FROM postgres_logs WHERE EXISTS (SELECT * FROM edge_logs)', 'a star in a subquery'],
    ['SELECT * FROM postgres_logs AS edge_logs, edge_logs AS e', 'a star over a join, one side aliased as the other table'],
  ])('gives a star over the table for %s: %s', async (sql) => {
    expect((await readsOf(sql)).starred.has('edge_logs')).toBe(true);
  });

  it("reads a star over a subquery or the caller's own CTE as passing named columns on", async () => {
    for (const sql of [
      'SELECT * FROM (SELECT id, timestamp FROM edge_logs) AS t',
      'WITH x AS (SELECT id FROM edge_logs) SELECT * FROM x',
      'SELECT max(COLUMNS(*)) FROM (SELECT id FROM edge_logs)',
      'SELECT * FROM postgres_logs',
    ]) {
      const reads = await readsOf(sql);
      expect(reads.starred.has('edge_logs'), sql).toBe(false);
      expect(reads.whole.has('edge_logs'), sql).toBe(false);
    }
  });

  it('merges the reads of several texts', async () => {
    const merged = mergeTableReads([await readsOf('SELECT id FROM edge_logs'), await readsOf('SELECT * FROM postgres_logs'), await readsOf('SELECT e FROM edge_logs e')]);
    expect(sorted(merged.names)).toEqual(['e', 'id']);
    expect(sorted(merged.starred)).toEqual(['postgres_logs']);
    expect(sorted(merged.whole)).toEqual(['edge_logs']);
  });
});
