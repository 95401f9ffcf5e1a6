import { DuckDBInstance, DuckDBPreparedStatement } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, supabasePreset, type Endpoints } from '../src/index';
import { installStageMeter, STAGES, type Stages } from '../bench/studio-stages';
import { edgeEvent, tempDir, writeLines } from './support/log-files';

// The Studio bench's table of a request's cost stage by stage (docs/performance.md, "The cost per
// request, stage by stage"): each stage's time is its own, so the stages and `other` add up to the
// request's total, and nothing is counted twice. Nothing here depends on how long a stage takes.
describe("the Studio bench's stage meter", () => {
  const tmp = tempDir('le-studio-stages-');
  const NOW = '2026-11-21T12:00:00.000Z';
  let ep: Endpoints;
  beforeAll(async () => {
    const events = Array.from({ length: 50 }, (_, i) => edgeEvent({ id: `e${i}`, project: 'default', timestamp: `2026-11-21T11:${String(i).padStart(2, '0')}:00Z`, path: `/rest/v1/t${i % 3}` }));
    ep = await createEndpoints({ ...supabasePreset, sources: { edgeLogs: writeLines(tmp.path('edge', 'a.ndjson'), events) }, now: () => new Date(NOW), cache: false });
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  const ask = () =>
    ep.query(
      'logs.all',
      { project: 'default', iso_timestamp_start: '2026-11-21T11:00:00Z', iso_timestamp_end: NOW },
      { sql: 'select r.path as path, count(*) as n from edge_logs cross join unnest(metadata) as m cross join unnest(m.request) as r group by path order by n desc' },
    );

  const sum = (s: Stages) => STAGES.reduce((total, stage) => total + s[`${stage}_ms`], 0);

  it('splits a first call into translate, check, parse, prepare, snapshot, bind, run and shape, adding up to its total', async () => {
    const meter = installStageMeter();
    try {
      const first = await meter.measure(ask);
      for (const stage of ['translate', 'check', 'parse', 'prepare', 'snapshot', 'run', 'shape'] as const) expect(first[`${stage}_ms`], stage).toBeGreaterThan(0);
      // Nothing counted twice (a parse inside the check, DuckDB work inside the listing): what is left is not negative.
      expect(first.other_ms).toBeGreaterThanOrEqual(0);
      // Each figure rounded to 0.01 ms on its own.
      expect(Math.abs(sum(first) - first.total_ms)).toBeLessThanOrEqual(0.06);
      // The text checked and its statement prepared once: a repeated call spends nothing there.
      const then = await meter.measure(ask);
      expect([then.translate_ms, then.check_ms, then.parse_ms, then.prepare_ms]).toEqual([0, 0, 0, 0]);
      expect(then.run_ms).toBeGreaterThan(0);
      expect(then.snapshot_ms).toBeGreaterThan(0);
      expect(then.other_ms).toBeGreaterThanOrEqual(0);
      expect(Math.abs(sum(then) - then.total_ms)).toBeLessThanOrEqual(0.06);
    } finally {
      meter.uninstall();
    }
  });

  it('keeps a synchronous method synchronous, counts nothing outside a measure and puts every method back', async () => {
    const original = { bind: DuckDBPreparedStatement.prototype.bind, runAndReadAll: DuckDBPreparedStatement.prototype.runAndReadAll };
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const meter = installStageMeter();
    try {
      const statement = await connection.prepare('select $1::INTEGER as n');
      let bound: unknown = 'not called';
      const stages = await meter.measure(async () => {
        bound = statement.bind([1]);
        await statement.runAndReadAll();
      });
      // A promise here would turn a throw of bind into a rejection nobody awaits.
      expect(bound).toBeUndefined();
      expect(stages.run_ms).toBeGreaterThan(0);
      // Prepared outside the measure: not counted in it.
      expect(stages.prepare_ms).toBe(0);
      expect(() => statement.bind([1, 2, 3])).toThrow();
    } finally {
      meter.uninstall();
      connection.closeSync();
      instance.closeSync();
    }
    expect(DuckDBPreparedStatement.prototype.bind).toBe(original.bind);
    expect(DuckDBPreparedStatement.prototype.runAndReadAll).toBe(original.runAndReadAll);
  });
});
