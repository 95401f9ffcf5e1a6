/**
 * Regression test: a line cut short where a value was due (right after ':' or ',') must not take
 * the valid line after it down with it. DuckDB's read_json(columns = ...) with ignore_errors
 * did exactly that; the generator's broken lines found it.
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import type { EndpointsWarning } from '../src/index';
import { memoryIO } from './support/cli';
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

describe('a file whose lines are all broken is told, not silent', () => {
  const tmp = tempDir('le-all-broken-');
  afterAll(() => tmp.cleanup());
  const CSV = 'id,timestamp,project\ne1,2026-11-21T11:00:00Z,abc\ne2,2026-11-21T11:01:00Z,abc\n';
  const told = (lines: number) => `none of its ${lines} lines is a JSON object (CSV or plain text named like newline-delimited JSON?)`;

  it('onWarning, the answer and inspectSources name it (plain and gzip); the other files answer, and empty files are no news', async () => {
    const dir = tmp.path('lib');
    writeLines(tmp.path('lib', 'good.ndjson'), [edgeEvent({ id: 'g1', project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
    writeFileSync(tmp.path('lib', 'export.ndjson'), CSV);
    writeFileSync(tmp.path('lib', 'notes.jsonl.gz'), gzipSync('just some text\r\n[1,2,3]\n\n"a string"'));
    writeFileSync(tmp.path('lib', 'empty.ndjson'), '');
    writeFileSync(tmp.path('lib', 'blank.ndjson'), '\n  \n\n');
    // One object after a broken line: a file with an event is not all broken.
    writeLines(tmp.path('lib', 'late.ndjson'), ['oops', '{"cut":', edgeEvent({ id: 'l1', project: 'abc', timestamp: '2026-11-21T11:02:00Z' })]);
    const warnings: EndpointsWarning[] = [];
    const { ep } = await endpointsAt({ edgeLogs: `${dir}/*` }, NOW, { onWarning: (w) => warnings.push(w) });
    try {
      const answer = await ep.query('logs.all', { project: 'abc', project_tier: 'FREE' });
      expect(answer.result.map((r) => r.id).sort()).toEqual(['g1', 'l1']);
      const expected = [
        { path: tmp.path('lib', 'export.ndjson'), reason: 'no_json_lines', message: told(3) },
        { path: tmp.path('lib', 'notes.jsonl.gz'), reason: 'no_json_lines', message: told(3) },
      ];
      const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
      expect([...answer.skippedFiles].sort(byPath)).toEqual(expected);
      expect(warnings.map((w) => w.message).sort()).toEqual(expected.map((f) => `${f.path} is left out of answers: ${f.message}`));
      expect(warnings.every((w) => w.code === 'file_skipped')).toBe(true);
      const [edge] = await ep.inspectSources();
      expect([...edge!.skippedFiles].sort(byPath)).toEqual(expected);
    } finally {
      await ep.close();
    }
  });

  it('log-endpoints query warns on stderr and still answers from the other files', async () => {
    writeLines(tmp.path('cli', 'good.ndjson'), [edgeEvent({ id: 'g1', project: 'abc', timestamp: '2026-11-21T11:00:00Z' })]);
    writeFileSync(tmp.path('cli', 'one-line.ndjson'), 'hello world');
    const { io, out } = memoryIO();
    const code = await main(['query', 'logs.all', '-p', 'project=abc', '-p', 'project_tier=FREE', '-f', 'json', '--now', NOW, '--edge-logs', tmp.path('cli', '*.ndjson')], io, 'test');
    expect(code).toBe(0);
    expect(out.stderr).toContain(`warning: ${tmp.path('cli', 'one-line.ndjson')} is left out of answers: its one line is not a JSON object (CSV or plain text named like newline-delimited JSON?)\n`);
    expect(JSON.parse(out.stdout).result.map((r: { id: string }) => r.id)).toEqual(['g1']);
  });
});
