import { afterAll, describe, expect, it } from 'vitest';
import { re2PatternProblem } from '../src/engine/re2-pattern';
import { createEndpoints, InvalidParameterError, type Engine, type CompiledQuery } from '../src/index';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

/** An engine that takes every pattern (as ClickHouse 26.x takes `(?<name>x)`) and records its queries. */
function lenientEngine() {
  const runs: CompiledQuery[] = [];
  const engine: Engine = {
    target: { dialect: 'duckdb' },
    run: async (request) => {
      runs.push(request);
      return { rows: [], engineMs: 1 };
    },
    checkPattern: async () => null,
    ping: async () => undefined,
    inspectSources: async () => [],
    close: async () => undefined,
  };
  return { engine, runs };
}

describe('regex parameters are judged by RE2 as DuckDB compiles it, whatever the engine', () => {
  const tmp = tempDir('le-re2-');
  afterAll(() => tmp.cleanup());

  it('re2PatternProblem accepts RE2 and says why it refuses the rest', async () => {
    for (const ok of ['abc', '^(abc|def)$', '(?i)ABC', '[a-z]+\\d{2,3}', '(?:x)']) expect(await re2PatternProblem(ok), ok).toBeNull();
    expect(await re2PatternProblem('(?<n>x)')).toMatch(/invalid perl operator: \(\?</);
    expect(await re2PatternProblem('(')).toMatch(/missing \)/);
    expect(await re2PatternProblem('(?<!x)y')).toMatch(/invalid perl operator/);
  });

  it('an engine that takes (?<n>x) never sees it: 400 invalid_parameter, in the same words as the DuckDB engine', async () => {
    const lenient = lenientEngine();
    const ep = await createEndpoints({ sources: {}, engine: lenient.engine, cache: false });
    writeLines(tmp.path('edge.ndjson'), [edgeEvent({ project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
    const duck = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson') }, NOW);
    try {
      for (const pattern of ['(?<n>x)', '(?P<n>x)|(']) {
        const refused = await ep.usageApiCounts({ project: pattern, interval: 'daily' }).catch((e: unknown) => e);
        expect(refused, pattern).toBeInstanceOf(InvalidParameterError);
        expect(refused).toMatchObject({ code: 'invalid_parameter', status: 400, param: 'project' });
        const byDuckDB = await duck.ep.usageApiCounts({ project: pattern, interval: 'daily' }).catch((e: unknown) => e);
        expect((refused as Error).message).toBe((byDuckDB as Error).message);
      }
      expect(lenient.runs).toEqual([]);
      // A pattern RE2 takes still reaches the engine.
      await ep.usageApiCounts({ project: '(?P<n>x)', interval: 'daily' });
      expect(lenient.runs).toHaveLength(1);
    } finally {
      await ep.close();
      await duck.ep.close();
    }
  });
});
