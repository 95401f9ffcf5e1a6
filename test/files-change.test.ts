import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuckDBEngine } from '../src/engine/duckdb/duckdb-engine';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { createHandler } from '../src/http';
import { createEndpoints, type EndpointsWarning } from '../src/index';
import type { ListedFile } from '../src/files/list-glob';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

const NOW = CENSUS_NOW;
const lines = (events: object[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

describe('a file that vanishes between listing and reading is absent, never an error', () => {
  const tmp = tempDir('le-vanish-');
  afterAll(() => tmp.cleanup());

  it('the engine lists again and answers exactly (a listed file deleted before DuckDB opens it)', async () => {
    writeLines(tmp.path('edge', 'a.ndjson'), censusEvents('a', 20));
    writeLines(tmp.path('gone', 'b.ndjson'), censusEvents('b', 5));
    const gone = tmp.path('gone', 'b.ndjson');
    const stats = statSync(gone);
    const listedOnce: ListedFile = { path: gone, kind: 'ndjson', size: stats.size, mtimeMs: stats.mtimeMs, ino: stats.ino };
    let listings = 0;
    // The first listing names a file that is deleted before it is read, as a rotation would.
    const engine = await createDuckDBEngine({
      sourceSet: BUILT_IN_SOURCE_SET,
      sources: { edgeLogs: tmp.path('edge', '*.ndjson') },
      extraInputs: {
        edgeLogs: {
          datasets: () => [],
          view: () => {
            if (listings++ > 0) return { ndjson: [] };
            rmSync(gone);
            return { ndjson: [{ file: listedOnce, start: 0, end: listedOnce.size }] };
          },
        },
      },
    });
    const ep = await createEndpoints({ sources: {}, engine, now: () => new Date(NOW), cache: false });
    try {
      const counted = await census(ep);
      expect(counted).toEqual({ total: 20, ids: idRange('a', 0, 20) });
      expect(listings).toBeGreaterThanOrEqual(2);
    } finally {
      await ep.close();
    }
  });

  it('a loop that moves a file in and deletes it never turns a query into an error', async () => {
    writeLines(tmp.path('loop', 'steady.ndjson'), censusEvents('s', 30));
    writeLines(tmp.path('loop-src', 'moving.ndjson'), censusEvents('m', 10));
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('loop', '*.ndjson') }, NOW);
    let moving = true;
    const mover = (async () => {
      for (let i = 0; moving; i++) {
        copyFileSync(tmp.path('loop-src', 'moving.ndjson'), tmp.path('loop', `.incoming-${i}`));
        renameSync(tmp.path('loop', `.incoming-${i}`), tmp.path('loop', 'moving.ndjson'));
        await new Promise((resolve) => setImmediate(resolve));
        rmSync(tmp.path('loop', 'moving.ndjson'));
        // Absent for a moment before the next move: every query attempt (at most 8) that lists the
        // file while it is there may lose it, and an endless run of such attempts answers 503 by
        // design (bounded retries). Never absent, the loop once kept all 8 attempts losing it.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const steady = censusEvents('s', 30);
    const movingEvents = censusEvents('m', 10);
    const idsOf = (events: Record<string, unknown>[], project: string) => events.filter((e) => e.project === project).map((e) => e.id as string);
    try {
      for (let q = 0; q < 30; q++) {
        // Each answer is either with the moving file or without it: never an error, never half of it.
        const usage = await ep.usageApiCounts({ project: '.', interval: 'daily' });
        expect([30, 40]).toContain(usage.reduce((n, r) => n + r.total_rest_requests, 0));
        const project = `p${q % 10}`;
        const ids = (await ep.logsAll({ project, project_tier: 'PAYG' })).map((r) => r.id).sort();
        const without = idsOf(steady, project).sort();
        expect([without, [...without, ...idsOf(movingEvents, project)].sort()]).toContainEqual(ids);
      }
    } finally {
      moving = false;
      await mover;
      await ep.close();
    }
  });
});

describe('a damaged file does not take its source down', () => {
  const tmp = tempDir('le-damaged-');
  let duck: DuckDBInstance;
  const goodIds = idRange('ok', 0, 30);

  beforeAll(async () => {
    duck = await DuckDBInstance.create(':memory:');
    writeLines(tmp.path('ok.ndjson'), censusEvents('ok', 30));
  });
  afterAll(() => {
    duck.closeSync();
    tmp.cleanup();
  });

  const gzipped = gzipSync(lines(censusEvents('gz', 2000)));
  const zstd = async () => {
    const c = await duck.connect();
    await c.run(`COPY (SELECT * FROM read_json_objects('${tmp.path('ok.ndjson')}')) TO '${tmp.path('src.ndjson.zst')}' (FORMAT csv, HEADER false, QUOTE '', COMPRESSION zstd)`);
    c.closeSync();
    return readFileSync(tmp.path('src.ndjson.zst'));
  };
  const kinds: Record<string, { name: string; write: (path: string) => Promise<void> | void; reason: string }> = {
    'corrupt Parquet': { name: 'corrupt.parquet', write: (p) => writeFileSync(p, 'this is not parquet at all'), reason: 'not_parquet' },
    'empty Parquet': { name: 'empty.parquet', write: (p) => writeFileSync(p, ''), reason: 'not_parquet' },
    'Parquet cut short': {
      name: 'cut.parquet',
      write: async (p) => {
        const c = await duck.connect();
        await c.run(`COPY (SELECT range AS id FROM range(1000)) TO '${p}.full' (FORMAT parquet)`);
        c.closeSync();
        writeFileSync(p, readFileSync(`${p}.full`).subarray(0, 300));
        rmSync(`${p}.full`);
      },
      reason: 'not_parquet',
    },
    'a fake .gz': { name: 'fake.ndjson.gz', write: (p) => writeFileSync(p, lines(censusEvents('fake', 3))), reason: 'broken_compression' },
    'a truncated .gz': { name: 'cut.ndjson.gz', write: (p) => writeFileSync(p, gzipped.subarray(0, gzipped.length >> 1)), reason: 'broken_compression' },
    'a truncated .zst': { name: 'cut.ndjson.zst', write: async (p) => writeFileSync(p, (await zstd()).subarray(0, 40)), reason: 'broken_compression' },
    'a named pipe': { name: 'pipe.ndjson', write: (p) => void execFileSync('mkfifo', [p]), reason: 'not_regular_file' },
  };

  for (const [kind, { name, write, reason }] of Object.entries(kinds)) {
    it(`${kind}: answers from the other files and says which file it skipped and why`, async () => {
      const dir = tmp.path(name.replace(/\W/g, '-'));
      mkdirSync(dir, { recursive: true });
      copyFileSync(tmp.path('ok.ndjson'), join(dir, 'ok.ndjson'));
      await write(join(dir, name));
      const warnings: EndpointsWarning[] = [];
      const { ep } = await endpointsAt({ edgeLogs: join(dir, '*') }, NOW, { onWarning: (w) => warnings.push(w) });
      try {
        expect(await census(ep)).toEqual({ total: 30, ids: goodIds });
        const answer = await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' });
        expect(answer.skippedFiles).toEqual([{ path: join(dir, name), reason, message: expect.any(String) }]);
        expect(answer.skippedFiles[0]!.message).not.toContain(dir);
        // Told once, however many queries leave it out.
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatchObject({ code: 'file_skipped', file: { path: join(dir, name), reason } });
        const [edge] = await ep.inspectSources();
        expect(edge!.skippedFiles).toEqual([expect.objectContaining({ path: join(dir, name), reason })]);
        // HTTP: a header names the file (its last two path segments) and the reason, never the folder.
        const handler = createHandler(ep, { auth: false });
        const response = await handler(new Request('http://x/api/endpoints/logs.all?project=p0&project_tier=PAYG'));
        expect(response.status).toBe(200);
        expect(response.headers.get('X-Skipped-Files')).toBe(`${dir.split('/').pop()}/${name};reason=${reason}`);
      } finally {
        await ep.close();
      }
    });
  }

  it('a damaged file is read again once it changes (fixed or replaced)', async () => {
    const dir = tmp.path('fixed');
    mkdirSync(dir, { recursive: true });
    writeLines(join(dir, 'ok.ndjson'), censusEvents('ok', 30));
    writeFileSync(join(dir, 'late.ndjson.gz'), 'not gzip yet');
    const { ep } = await endpointsAt({ edgeLogs: join(dir, '*') }, NOW);
    try {
      expect((await census(ep)).total).toBe(30);
      writeFileSync(join(dir, 'late.ndjson.gz'), gzipSync(lines(censusEvents('late', 5))));
      expect(await census(ep)).toEqual({ total: 35, ids: [...goodIds, ...idRange('late', 0, 5)].sort() });
      expect((await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' })).skippedFiles).toEqual([]);
    } finally {
      await ep.close();
    }
  });

  it('a dangling symlink is absent, not damaged', async () => {
    const dir = tmp.path('dangling');
    mkdirSync(dir, { recursive: true });
    writeLines(join(dir, 'ok.ndjson'), censusEvents('ok', 30));
    symlinkSync(join(dir, 'nowhere.ndjson'), join(dir, 'link.ndjson'));
    const { ep } = await endpointsAt({ edgeLogs: join(dir, '*.ndjson') }, NOW);
    try {
      expect((await census(ep)).total).toBe(30);
      expect((await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' })).skippedFiles).toEqual([]);
    } finally {
      await ep.close();
    }
  });
});

describe('byte order marks and CRLF line ends, at any file position', () => {
  const tmp = tempDir('le-bom-');
  afterAll(() => tmp.cleanup());
  const events = censusEvents('bom', 12);
  const text = (eol: string, bom: boolean, from: number, to: number) =>
    `${bom ? '\uFEFF' : ''}${events
      .slice(from, to)
      .map((e) => JSON.stringify(e))
      .join(eol)}${eol}`;

  const layouts: Record<string, Array<[string, string | Buffer]>> = {
    'a BOM in the only file': [['a.ndjson', text('\n', true, 0, 12)]],
    'a BOM and CRLF in the only file': [['a.ndjson', text('\r\n', true, 0, 12)]],
    'CRLF without a BOM': [['a.ndjson', text('\r\n', false, 0, 12)]],
    'a BOM in the second of two files': [
      ['a.ndjson', text('\n', false, 0, 6)],
      ['b.ndjson', text('\n', true, 6, 12)],
    ],
    'a BOM in every file': [
      ['a.ndjson', text('\r\n', true, 0, 4)],
      ['b.ndjson', text('\n', true, 4, 8)],
      ['c.ndjson', text('\r\n', true, 8, 12)],
    ],
    'a BOM inside a gzip file': [['a.ndjson.gz', gzipSync(text('\n', true, 0, 12))]],
  };
  for (const [name, files] of Object.entries(layouts)) {
    it(`${name}: every event is read`, async () => {
      const dir = tmp.path(name.replace(/\W+/g, '-'));
      mkdirSync(dir, { recursive: true });
      for (const [file, content] of files) writeFileSync(join(dir, file), content);
      const { ep } = await endpointsAt({ edgeLogs: join(dir, '*') }, NOW);
      try {
        expect(await census(ep)).toEqual({ total: 12, ids: idRange('bom', 0, 12) });
        expect((await ep.inspectSources())[0]).toMatchObject({ lines: 12, skippedLines: 0 });
      } finally {
        await ep.close();
      }
    });
  }
});

describe('commit markers of managed storage are the only lines left out', () => {
  const tmp = tempDir('le-marker-');
  afterAll(() => tmp.cleanup());

  it('a marker line is not an event; an event with a field of that name elsewhere still is', async () => {
    const events = censusEvents('mark', 6);
    const own = { ...events[5]!, _wal_commit: { seq: 1 } };
    const marker = '{"_wal_commit":{"seq":1,"bytes":10,"crc32":1}}';
    writeFileSync(
      tmp.path('a.ndjson'),
      [...events.slice(0, 3).map((e) => JSON.stringify(e)), marker, ...events.slice(3, 5).map((e) => JSON.stringify(e)), JSON.stringify(own), marker].join('\n') + '\n',
    );
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('*.ndjson') }, NOW);
    try {
      expect(await census(ep)).toEqual({ total: 6, ids: idRange('mark', 0, 6) });
      expect((await ep.inspectSources())[0]).toMatchObject({ lines: 6, skippedLines: 0 });
    } finally {
      await ep.close();
    }
  });
});

describe('timestamps by magnitude (docs/semantics.md, "Timestamps")', () => {
  const tmp = tempDir('le-magnitude-');
  let duck: DuckDBInstance;
  beforeAll(async () => {
    duck = await DuckDBInstance.create(':memory:');
  });
  afterAll(() => {
    duck.closeSync();
    tmp.cleanup();
  });

  // 2026-11-21T10:15:02.123456Z in every unit, as loggers write it.
  const forms: Record<string, { value: unknown; expected: string }> = {
    'seconds (integer)': { value: 1795256102, expected: '2026-11-21T10:15:02.000000Z' },
    'seconds with a fraction (time.time())': { value: 1795256102.123456, expected: '2026-11-21T10:15:02.123456Z' },
    'milliseconds (Date.now())': { value: 1795256102123, expected: '2026-11-21T10:15:02.123000Z' },
    'microseconds (Logflare)': { value: 1795256102123456, expected: '2026-11-21T10:15:02.123456Z' },
    nanoseconds: { value: '1795256102123456789', expected: '2026-11-21T10:15:02.123456Z' },
    'seconds as a numeric string': { value: '1795256102', expected: '2026-11-21T10:15:02.000000Z' },
    'milliseconds as a numeric string': { value: '1795256102123', expected: '2026-11-21T10:15:02.123000Z' },
    'seconds in exponent notation': { value: '1.795256102123e9', expected: '2026-11-21T10:15:02.123000Z' },
    'ISO 8601': { value: '2026-11-21T10:15:02.123456Z', expected: '2026-11-21T10:15:02.123456Z' },
  };

  it('NDJSON: every unit lands on the same instant', async () => {
    const events = Object.entries(forms).map(([name, f], i) => edgeEvent({ id: `t${i}`, project: 'mag', timestamp: f.value as string, message: name }));
    // Nanoseconds as a JSON number (not a string) too: too large for a double, exact in the file.
    const raw = [
      ...events.map((e) => JSON.stringify(e)),
      JSON.stringify(edgeEvent({ id: 'tns', project: 'mag', timestamp: 0, message: 'ns number' })).replace('"timestamp":0', '"timestamp":1795256102123456789'),
    ];
    writeFileSync(tmp.path('mag.ndjson'), raw.join('\n') + '\n');
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('mag.ndjson') }, NOW);
    try {
      const rows = await ep.logsAll({ project: 'mag', project_tier: 'FREE' });
      const byMessage = Object.fromEntries(rows.map((r) => [r.event_message, r.timestamp]));
      for (const [name, f] of Object.entries(forms)) expect(byMessage[name], name).toBe(f.expected);
      expect(byMessage['ns number']).toBe('2026-11-21T10:15:02.123456Z');
      expect((await ep.inspectSources())[0]!.skippedLines).toBe(0);
      // None of them falls outside the window any more: the hourly usage counts every one.
      const usage = await ep.usageApiCounts({ project: 'mag', interval: 'daily' });
      expect(usage.reduce((n, r) => n + r.total_rest_requests, 0)).toBe(raw.length);
    } finally {
      await ep.close();
    }
  });

  it('Parquet: INT64 and DOUBLE timestamps follow the same rule', async () => {
    const c = await duck.connect();
    const cases = [
      ['BIGINT', '1795256102', '2026-11-21T10:15:02.000000Z'],
      ['BIGINT', '1795256102123', '2026-11-21T10:15:02.123000Z'],
      ['BIGINT', '1795256102123456', '2026-11-21T10:15:02.123456Z'],
      ['BIGINT', '1795256102123456789', '2026-11-21T10:15:02.123456Z'],
      ['DOUBLE', '1795256102.5', '2026-11-21T10:15:02.500000Z'],
    ] as const;
    try {
      for (const [i, [type, value, expected]] of cases.entries()) {
        const file = tmp.path(`mag-${i}.parquet`);
        await c.run(`COPY (SELECT 'p${i}' AS id, CAST(${value} AS ${type}) AS timestamp, 'x' AS event_message, 'mag' AS project, '{}' AS metadata) TO '${file}' (FORMAT parquet)`);
        const { ep } = await endpointsAt({ edgeLogs: file }, NOW);
        try {
          expect(
            (await ep.logsAll({ project: 'mag', project_tier: 'FREE' })).map((r) => r.timestamp),
            `${type} ${value}`,
          ).toEqual([expected]);
        } finally {
          await ep.close();
        }
      }
    } finally {
      c.closeSync();
    }
  });
});

describe('globs that match nothing are told', () => {
  const tmp = tempDir('le-empty-glob-');
  afterAll(() => tmp.cleanup());

  it('inspectSources marks each configured glob that matches nothing', async () => {
    writeLines(tmp.path('edge', 'a.ndjson'), censusEvents('a', 3));
    const typo = tmp.path('egde', '*.ndjson');
    const { ep } = await endpointsAt({ edgeLogs: [tmp.path('edge', '*.ndjson'), typo], functionEdgeLogs: tmp.path('fn', '*.ndjson') }, NOW);
    try {
      const [edge, fn] = await ep.inspectSources();
      expect(edge).toMatchObject({
        globs: [
          { glob: tmp.path('edge', '*.ndjson'), files: 1 },
          { glob: typo, files: 0 },
        ],
        emptyGlobs: [typo],
      });
      expect(fn).toMatchObject({ files: 0, emptyGlobs: [tmp.path('fn', '*.ndjson')] });
    } finally {
      await ep.close();
    }
  });

  it('a folder given without a glob means every log file below it', async () => {
    writeLines(tmp.path('folder', 'x.ndjson'), censusEvents('x', 4));
    writeLines(tmp.path('folder', 'deeper', 'y.jsonl'), censusEvents('y', 2));
    writeFileSync(tmp.path('folder', 'notes.txt'), 'not a log');
    const { ep } = await endpointsAt({ edgeLogs: tmp.path('folder') }, NOW);
    try {
      expect(await census(ep)).toEqual({ total: 6, ids: [...idRange('x', 0, 4), ...idRange('y', 0, 2)].sort() });
    } finally {
      await ep.close();
    }
  });
});
