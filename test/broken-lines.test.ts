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

  it('a broken line of 40 MB costs only itself, and inspectSources reports it instead of throwing', async () => {
    const ids = ['a', 'b', 'c'];
    const [a, b, c] = ids.map((id, i) => edgeEvent({ id, project: 'long', timestamp: `2026-11-21T11:0${i}:00Z` }));
    writeLines(tmp.path('long', 'edge.ndjson'), [a!, b!, `{"id":"cut","event_message":"${'x'.repeat(40 * 1024 * 1024)}`, c!]);
    // Asked first, before any query has met the file.
    const first = await endpointsAt({ edgeLogs: tmp.path('long', '*.ndjson') }, NOW);
    try {
      const [edge] = await first.ep.inspectSources();
      expect(edge).toMatchObject({ files: 1, lines: 4, skippedLines: 1, skippedFiles: [] });
    } finally {
      await first.ep.close();
    }
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('long', '*.ndjson') }, NOW);
    try {
      const answer = await ep.query('logs.all', { project: 'long', project_tier: 'FREE' });
      expect(answer.result.map((r) => r.id).sort()).toEqual(ids);
      expect(answer.skippedFiles).toEqual([]);
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
