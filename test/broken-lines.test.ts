/**
 * Regression test: a line cut short where a value was due (right after ':' or ',') must not take
 * the valid line after it down with it. DuckDB's read_json(columns = ...) with ignore_errors
 * did exactly that; the generator's broken lines found it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';

const CUTS = [
  '{"id":"cut","metadata":{"request":{"headers":', // after ':'
  '{"id":"cut",', // after ','
  '{"id":', // after the first ':'
  '{"id":"cut","metadata":[1,', // inside an array
  '{"id":"cut","timestamp":"2026-11-21T10:', // inside a string
  '{',
  'not json',
];

describe('a broken line loses nothing around it', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('in the edge log, whatever the point the line was cut at', async () => {
    const lines: Array<object | string> = [];
    const ids: string[] = [];
    CUTS.forEach((cut, i) => {
      const id = `e${i}`;
      ids.push(id);
      lines.push(cut, edgeEvent({ id, project: 'abc', timestamp: `2026-11-21T11:0${i}:00Z` }));
    });
    writeLines(tmp.path('edge.ndjson'), lines);
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('edge.ndjson') }, NOW);
    try {
      const rows = await ep.logsAll({ project: 'abc', project_tier: 'FREE' });
      expect(rows.map((r) => r.id).sort()).toEqual(ids);
      const [edge] = await ep.inspectSources();
      expect(edge).toMatchObject({ lines: 2 * CUTS.length, skippedLines: CUTS.length });
    } finally {
      await ep.close();
    }
  });

  it('in the edge-function log', async () => {
    const lines: Array<object | string> = [];
    for (const [i, cut] of CUTS.entries()) lines.push(cut, functionEvent({ project: 'abc', timestamp: `2026-11-21T11:0${i}:00Z`, ms: 10 }));
    writeLines(tmp.path('fn.ndjson'), lines);
    const { ep } = await endpointsAt({ functionEdgeLogs: tmp.path('fn.ndjson') }, NOW);
    try {
      const rows = await ep.functionsInvocationStats({ project: 'abc', interval: '1day' });
      expect(rows).toEqual([expect.objectContaining({ timestamp: '2026-11-21T11:00:00.000000Z', count: CUTS.length })]);
    } finally {
      await ep.close();
    }
  });
});
