import { afterAll, describe, expect, it, vi } from 'vitest';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { CheckedSqlMemo } from '../src/query/checked-sql-memo';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { createEndpoints, InvalidSqlError } from '../src/index';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// A caller's SQL is translated and checked once per text and instance (docs/sandboxing.md,
// "Caching"): Studio repeats the same texts, and the check cost more than the run.
describe("callers' SQL checked once per text", () => {
  const tmp = tempDir('le-checked-sql-');
  afterAll(() => tmp.cleanup());

  it('keeps the last texts it accepted, least recently used out first, and never a refusal', async () => {
    const memo = new CheckedSqlMemo(2);
    let checks = 0;
    const ok = (sql: string) => () => Promise.resolve({ sql, key: `k-${++checks}` });
    const a1 = await memo.get('logs.all', 'select 1', ok('select 1'));
    expect(await memo.get('logs.all', 'select 1', ok('select 1'))).toBe(a1);
    // The same text to another endpoint is another check.
    await memo.get('other', 'select 1', ok('select 1'));
    expect(checks).toBe(2);
    // 'select 1' of logs.all was used least recently: a third text pushes it out.
    await memo.get('logs.all', 'select 2', ok('select 2'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(memo.size).toBe(2);
    await memo.get('logs.all', 'select 1', ok('select 1'));
    expect(checks).toBe(4);
    const refused = () => Promise.reject(new InvalidSqlError('syntax', 'no'));
    await expect(memo.get('logs.all', 'selec', refused)).rejects.toThrow('no');
    await new Promise((resolve) => setImmediate(resolve));
    expect(memo.size).toBe(2);
  });

  it('an instance checks a text once and answers every call of it; a refused text is refused every time', async () => {
    writeLines(tmp.path('edge', 'a.ndjson'), [edgeEvent({ id: 'a', project: 'p', timestamp: '2026-11-21T11:00:00Z' })]);
    const inner = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources: { edgeLogs: tmp.path('edge', '*.ndjson') } });
    // Every check of a caller's SQL goes through the instance's CallerSqlCheck: counted there.
    const check = vi.spyOn(CallerSqlCheck.prototype, 'check');
    const ep = await createEndpoints({ engine: inner, sandboxable: ['logs.all'], cache: false, now: () => new Date('2026-11-21T12:00:00Z') });
    try {
      // createEndpoints checks that each sandboxable endpoint takes a caller's SQL.
      check.mockClear();
      const params = { project: 'p', project_tier: 'FREE' };
      for (let i = 0; i < 3; i++) expect((await ep.query('logs.all', params, { sql: 'select id from edge_logs' })).result).toEqual([{ id: 'a' }]);
      expect(check).toHaveBeenCalledTimes(1);
      for (let i = 0; i < 2; i++) await expect(ep.query('logs.all', params, { sql: 'select nope(' })).rejects.toBeInstanceOf(InvalidSqlError);
      expect(check).toHaveBeenCalledTimes(3);
    } finally {
      check.mockRestore();
      await ep.close();
      await inner.close();
    }
  });
});
