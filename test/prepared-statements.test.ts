import { appendFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement } from '@duckdb/node-api';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { PreparedStatements } from '../src/engine/duckdb/prepared-statements';
import { createEndpoints } from '../src/index';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// A repeated text is not prepared again (docs/performance.md, "Prepared statements"): Studio's
// lists and charts send the same SQL with other bounds, and preparing it cost 2-15 ms a call.
describe('prepared statements kept per connection and text', () => {
  const tmp = tempDir('le-prepared-');
  afterAll(() => tmp.cleanup());
  afterEach(() => vi.restoreAllMocks());

  it('keeps the last texts it prepared, least recently used out and destroyed first, never a refused one', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    const destroy = vi.spyOn(DuckDBPreparedStatement.prototype, 'destroySync');
    const statements = new PreparedStatements(2);
    try {
      const one = await statements.statement(connection, 'SELECT 1 + $n AS x');
      expect(await statements.statement(connection, 'SELECT 1 + $n AS x')).toBe(one);
      one.bind({ n: 41 });
      expect((await one.runAndReadAll()).getRows()).toEqual([[42]]);
      expect(prepare).toHaveBeenCalledTimes(1);
      const two = await statements.statement(connection, 'SELECT 2');
      // 'SELECT 2' is now the least recently used: a third text pushes it out, destroyed.
      await statements.statement(connection, 'SELECT 1 + $n AS x');
      await statements.statement(connection, 'SELECT 3');
      expect(destroy.mock.contexts).toEqual([two]);
      expect(await statements.statement(connection, 'SELECT 1 + $n AS x')).toBe(one);
      expect(prepare).toHaveBeenCalledTimes(3);
      // Another connection keeps its own.
      const other = await instance.connect();
      expect(await statements.statement(other, 'SELECT 1 + $n AS x')).not.toBe(one);
      for (let i = 0; i < 2; i++) await expect(statements.statement(connection, 'SELEC 1')).rejects.toThrow(/syntax/i);
      expect(prepare).toHaveBeenCalledTimes(6);
      statements.destroyAll();
      expect(destroy).toHaveBeenCalledTimes(4);
      other.closeSync();
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  it("a caller's SQL repeated with other bounds is prepared once; answers follow the files as they change; close destroys every statement", async () => {
    const edge = (id: string, minute: number) => edgeEvent({ id, project: 'p', timestamp: `2026-11-21T11:${String(minute).padStart(2, '0')}:00Z` });
    writeLines(tmp.path('edge', 'a.ndjson'), [edge('a1', 0), edge('a2', 30)]);
    const sources = { edgeLogs: tmp.path('edge', '*.ndjson') };
    const open = async () => {
      const engine = await createDuckDBEngine({ sourceSet: BUILT_IN_SOURCE_SET, sources });
      const ep = await createEndpoints({ engine, sandboxable: ['logs.all'], cache: false, now: () => new Date('2026-11-21T12:00:00Z') });
      return { ep, close: async () => (await ep.close(), await engine.close()) };
    };
    const sql = 'select id as reused_id from edge_logs order by id';
    const ask = (ep: Awaited<ReturnType<typeof open>>['ep'], start: string) => ep.query('logs.all', { project: 'p', iso_timestamp_start: start }, { sql }).then((r) => r.result);
    // What an engine that never saw the files before answers.
    const fresh = async (start: string) => {
      const other = await open();
      try {
        return await ask(other.ep, start);
      } finally {
        await other.close();
      }
    };
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    const destroy = vi.spyOn(DuckDBPreparedStatement.prototype, 'destroySync');
    // The caller's statements this engine prepared (not those of the fresh engines), in order.
    const ours: Promise<DuckDBPreparedStatement>[] = [];
    const { ep: opened, close } = await open();
    const ep = {
      query: async (...args: Parameters<typeof opened.query>) => {
        const before = prepare.mock.calls.length;
        try {
          return await opened.query(...args);
        } finally {
          prepare.mock.calls.forEach(([text], i) => i >= before && text.includes('reused_id') && ours.push(prepare.mock.results[i]!.value));
        }
      },
    } as typeof opened;
    const callers = () => Promise.all(ours);
    let closed = false;
    try {
      expect(await ask(ep, '2026-11-21T10:00:00Z')).toEqual([{ reused_id: 'a1' }, { reused_id: 'a2' }]);
      // The same text with another bound: the statement prepared for the first call runs again.
      expect(await ask(ep, '2026-11-21T11:15:00Z')).toEqual([{ reused_id: 'a2' }]);
      expect(await ask(ep, '2026-11-21T10:00:00Z')).toEqual([{ reused_id: 'a1' }, { reused_id: 'a2' }]);
      expect(await callers()).toHaveLength(1);

      // A file that grew under the same name is the same text: the kept statement reads the rows it holds now.
      appendFileSync(tmp.path('edge', 'a.ndjson'), `${JSON.stringify(edge('a3', 45))}\n`);
      const grown = await ask(ep, '2026-11-21T10:00:00Z');
      expect(grown).toEqual([{ reused_id: 'a1' }, { reused_id: 'a2' }, { reused_id: 'a3' }]);
      expect(grown).toEqual(await fresh('2026-11-21T10:00:00Z'));
      expect(await callers()).toHaveLength(1);

      // A new file is another text, so another statement: it reads the new file too.
      writeLines(tmp.path('edge', 'b.ndjson'), [edge('b1', 50)]);
      const added = await ask(ep, '2026-11-21T11:15:00Z');
      expect(added).toEqual([{ reused_id: 'a2' }, { reused_id: 'a3' }, { reused_id: 'b1' }]);
      expect(added).toEqual(await fresh('2026-11-21T11:15:00Z'));
      expect(await callers()).toHaveLength(2);

      const kept = await callers();
      expect(kept.some((s) => destroy.mock.contexts.includes(s))).toBe(false);
      await close();
      closed = true;
      // None outlives the engine: every caller's statement it prepared was destroyed by its close.
      for (const statement of kept) expect(destroy.mock.contexts).toContain(statement);
    } finally {
      if (!closed) await close();
    }
  });
});
