import { cpSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDataDir, defineEndpoint, type Endpoints } from '../src/index';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetStateStable, type DataFile } from '../src/dataset/dataset-log';
import { datasetDir } from '../src/managed/managed-inputs';
import { openWalSet } from '../src/managed/wal/wal-set';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { edgeEvent, endpointsAt, functionEvent, tempDir, writeLines } from './support/log-files';

// Damage of the same size inside a compacted dataset's files (docs/damaged-data.md, "Checksums"):
// bytes flipped, zeroed or rewritten in a data file, a head or a stored rollup. Every answer
// equals the undamaged one or names the damaged file; `check` reports each; `check --repair`
// writes data files again from their inputs (kept here) and companions from their data files.

const NOW = '2026-11-21T12:00:00Z';
const REFS = ['aaaabbbbccccddddeeee', 'ffffgggghhhhiiiijjjj', 'kkkkllllmmmmnnnnoooo'];
const PATHS = ['/rest/v1/todos', '/storage/v1/object/a.png', '/auth/v1/token', '/realtime/v1/websocket', '/functions/v1/hi'];

/** Every id a source serves with its copies, and the events its stored rollups count. */
const census = [
  defineEndpoint({
    name: 'census.edge',
    sql: { duckdb: 'SELECT id, count(*)::INTEGER AS copies FROM edge_logs GROUP BY id ORDER BY id' },
    maxRows: 100_000,
    columns: { id: 'text', copies: 'integer' },
  }),
  defineEndpoint({
    name: 'census.fn',
    sql: { duckdb: 'SELECT id, count(*)::INTEGER AS copies FROM function_edge_logs GROUP BY id ORDER BY id' },
    maxRows: 100_000,
    columns: { id: 'text', copies: 'integer' },
  }),
  defineEndpoint({
    name: 'census.rollups',
    sql: {
      duckdb: `SELECT (SELECT sum(rest_requests + storage_requests + auth_requests + realtime_requests) FROM edge_logs_url_hourly)::INTEGER AS edge,
                           (SELECT sum(count) FROM function_edge_logs_hourly)::INTEGER AS fn`,
    },
    columns: { edge: 'integer', fn: 'integer' },
  }),
];

/** The questions asked before and after each damage: the built-ins in the ways that read rollups, heads and rows. */
const QUESTIONS: Array<[string, Record<string, string>]> = [
  ['census.edge', {}],
  ['census.fn', {}],
  ['census.rollups', {}],
  ...REFS.flatMap(
    (project): Array<[string, Record<string, string>]> => [
      ['logs.all', { project, project_tier: 'PAYG' }],
      ['logs.all', { project, project_tier: 'PRO', iso_timestamp_end: '2026-11-20T06:00:00Z' }],
      ...['daily', 'hourly', '7day'].map((interval): [string, Record<string, string>] => ['usage.api-counts', { project, interval }]),
      ...['7day', '1day', '1hr'].map((interval): [string, Record<string, string>] => ['functions.invocation-stats', { project, interval }]),
      ['functions.invocation-stats', { project, interval: '7day', function_id: 'f2' }],
    ],
  ),
];

type Answers = Array<{ question: string; result: unknown; skipped: Array<{ path: string; reason: string }> }>;

async function ask(ep: Endpoints): Promise<Answers> {
  const out: Answers = [];
  for (const [name, params] of QUESTIONS) {
    const answer = await ep.query(name, params);
    out.push({ question: `${name} ${JSON.stringify(params)}`, result: answer.result, skipped: answer.skippedFiles.map(({ path, reason }) => ({ path, reason })) });
  }
  return out;
}

const tmp = tempDir('le-same-size-');
const template = tmp.path('template');
let reference: Answers = [];

const open = (dataDir: string) => endpointsAt({ edgeLogs: datasetDir(dataDir, 'edgeLogs'), functionEdgeLogs: datasetDir(dataDir, 'functionEdgeLogs') }, NOW, { endpoints: census }).then((x) => x.ep);

beforeAll(async () => {
  const base = Date.parse('2026-11-18T00:00:00Z');
  for (let file = 0; file < 3; file++) {
    const edge: object[] = [];
    const fns: object[] = [];
    for (let k = 0; k < 400; k++) {
      const i = file * 400 + k;
      const ref = REFS[i % REFS.length]!;
      const at = new Date(base + ((i * 617) % (3.4 * 24 * 60)) * 60_000 + (i % 50) * 1000).toISOString();
      const path = PATHS[i % PATHS.length]!;
      edge.push(edgeEvent({ id: `e-${i}`, project: ref, timestamp: at, path, url: `https://${ref}.supabase.co${path}` }));
      fns.push({
        ...functionEvent({ id: `f-${i}`, project: ref, timestamp: at, ms: (i * 37) % 900, status: i % 9 === 0 ? 500 : 200 }),
        metadata: { project_ref: ref, function_id: `f${i % 4}`, execution_time_ms: (i * 37) % 900, response: { status_code: i % 9 === 0 ? 500 : 200 } },
      });
    }
    writeLines(tmp.path('inputs', `edge-${file}.ndjson`), edge);
    writeLines(tmp.path('inputs', `fn-${file}.ndjson`), fns);
  }
  await (await openWalSet(template, BUILT_IN_SOURCE_SET)).close();
  // One run per input file, inputs kept (so a damaged file can be written again from them).
  for (let file = 0; file < 3; file++) {
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('inputs', `edge-${file}.ndjson`), outDir: datasetDir(template, 'edgeLogs') });
    await compactLogs({ source: 'functionEdgeLogs', inputs: tmp.path('inputs', `fn-${file}.ndjson`), outDir: datasetDir(template, 'functionEdgeLogs') });
  }
  const ep = await open(template);
  try {
    reference = await ask(ep);
  } finally {
    await ep.close();
  }
  expect(reference.every((a) => a.skipped.length === 0)).toBe(true);
  expect((reference[0]!.result as unknown[]).length).toBe(1200);
});
afterAll(() => tmp.cleanup());

/** Where in a Parquet file its pages are: after the magic bytes, before the footer. */
function pageArea(bytes: Buffer): { start: number; end: number } {
  return { start: 4, end: bytes.length - 8 - bytes.readUInt32LE(bytes.length - 8) };
}

/** Each damage keeps the file's size. */
const DAMAGES: Record<string, (path: string) => void> = {
  '16 bytes flipped in place': (path) => {
    const bytes = readFileSync(path);
    const { start, end } = pageArea(bytes);
    for (let k = 0; k < 16; k++) {
      const at = start + Math.floor(((k + 0.5) * (end - start)) / 16);
      bytes[at] = bytes[at]! ^ 0x5a;
    }
    writeFileSync(path, bytes);
  },
  '512 bytes zeroed in place': (path) => {
    const bytes = readFileSync(path);
    const { start, end } = pageArea(bytes);
    const from = start + Math.floor((end - start) / 3);
    bytes.fill(0, from, Math.min(end, from + 512));
    writeFileSync(path, bytes);
  },
  'rewritten to the same size (a new file renamed over it)': (path) => {
    const bytes = readFileSync(path);
    const { start, end } = pageArea(bytes);
    const from = start + Math.floor((end - start) / 2);
    for (let i = from; i < Math.min(end, from + 64); i++) bytes[i] = ~bytes[i]! & 0xff;
    writeFileSync(`${path}.new`, bytes);
    renameSync(`${path}.new`, path);
  },
};

/** The files a damage lands on: a data file, its head and its stored rollups, of each source. */
const TARGETS: Record<string, { source: 'edgeLogs' | 'functionEdgeLogs'; pick: (f: DataFile) => string; data: boolean }> = {
  'a gateway data file': { source: 'edgeLogs', pick: (f) => f.path, data: true },
  'a gateway head': { source: 'edgeLogs', pick: (f) => f.head!.path, data: false },
  'a gateway stored rollup (URL counts)': { source: 'edgeLogs', pick: (f) => f.rollups!.edge_logs_url_hourly!.path, data: false },
  'a gateway stored rollup (trigram map)': { source: 'edgeLogs', pick: (f) => f.rollups!.edge_logs_url_grams!.path, data: false },
  'an edge-function data file': { source: 'functionEdgeLogs', pick: (f) => f.path, data: true },
  'an edge-function stored rollup': { source: 'functionEdgeLogs', pick: (f) => f.rollups!.function_edge_logs_hourly!.path, data: false },
};

/** The newest day's file of the second run: in every window of the questions. */
function victimOf(dataDir: string, source: string): DataFile {
  const files = [...readDatasetStateStable(datasetDir(dataDir, source)).files.values()].sort((a, b) => a.path.localeCompare(b.path));
  const newest = files.filter((f) => f.day === '2026-11-21');
  return newest[1] ?? newest[0]!;
}

describe('same-size damage of a data file, head or stored rollup: seen, never a wrong answer; check finds it, check --repair repairs it', () => {
  let n = 0;
  for (const [target, { source, pick, data }] of Object.entries(TARGETS)) {
    for (const [kind, damage] of Object.entries(DAMAGES)) {
      it(`${target}, ${kind}`, async () => {
        const dataDir = tmp.path(`case-${++n}`);
        cpSync(template, dataDir, { recursive: true });
        const victim = victimOf(dataDir, source);
        const path = join(datasetDir(dataDir, source), pick(victim));
        const ep = await open(dataDir);
        try {
          // Read (and verified) once before the damage: a verdict is kept per version of a file only.
          expect(await ask(ep)).toEqual(reference);
          damage(path);
          const answers = await ask(ep);
          for (const [i, answer] of answers.entries()) {
            if (answer.skipped.length === 0) {
              expect(answer, answer.question).toEqual(reference[i]);
            } else {
              expect(data, `${answer.question}: a damaged companion is never named`).toBe(true);
              expect(answer.skipped, answer.question).toEqual([{ path, reason: 'checksum_mismatch' }]);
            }
          }
          // A damaged data file is named by every question that reads its rows.
          if (data) expect(answers.filter((a) => a.skipped.length > 0).length).toBeGreaterThan(0);
        } finally {
          await ep.close();
        }
        const found = await checkDataDir(dataDir);
        expect(found.problems).toEqual([{ source, kind: 'committed_file', path, message: expect.stringMatching(/^checksum_mismatch: /) }]);
        const repaired = await checkDataDir(dataDir, { repair: true });
        expect(repaired.problems).toEqual([]);
        expect(repaired.repaired.join('\n')).toMatch(data ? /wrote 1 damaged file\(s\) again from their inputs/ : /wrote 1 of 1 damaged head\(s\) or stored rollup\(s\) again/);
        const after = await open(dataDir);
        try {
          expect(await ask(after)).toEqual(reference);
        } finally {
          await after.close();
        }
        expect((await checkDataDir(dataDir)).problems).toEqual([]);
      });
    }
  }

  it('a damaged data file whose inputs are gone: named until check --repair takes it out of the log, saying its events are lost', async () => {
    const dataDir = tmp.path('no-inputs');
    cpSync(template, dataDir, { recursive: true });
    const victim = victimOf(dataDir, 'functionEdgeLogs');
    const path = join(datasetDir(dataDir, 'functionEdgeLogs'), victim.path);
    DAMAGES['16 bytes flipped in place']!(path);
    const inputs = tmp.path('inputs-moved');
    cpSync(tmp.path('inputs'), inputs, { recursive: true });
    rmSync(tmp.path('inputs'), { recursive: true });
    try {
      const before = await open(dataDir);
      try {
        expect((await before.query('census.fn', {})).skippedFiles).toEqual([{ path, reason: 'checksum_mismatch', message: expect.any(String) }]);
      } finally {
        await before.close();
      }
      const repaired = await checkDataDir(dataDir, { repair: true });
      expect(repaired.repaired.join('\n')).toMatch(/took 1 missing or unreadable file\(s\) out of the log.*their events are lost unless restored from a backup/);
      const ep = await open(dataDir);
      try {
        const ids = (await ep.query('census.fn', {})).result as Array<{ id: string; copies: number }>;
        expect(ids.length).toBe(1200 - victim.rows);
        expect(ids.every((r) => r.copies === 1)).toBe(true);
      } finally {
        await ep.close();
      }
    } finally {
      cpSync(inputs, tmp.path('inputs'), { recursive: true });
    }
  });
});
