import { cpSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../src/http';
import { compactLogs } from '../src/compaction/compact';
import { appendCommit, readDatasetState, type DataFile } from '../src/dataset/dataset-log';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { endpointsAt, tempDir, writeLines } from './support/log-files';
import { usageApiCounts } from '../src/definitions/usage-api-counts';

/** usage.api-counts as its raw statement alone answers: it reads every data file of the window. */
const rawUsage = { ...usageApiCounts, name: 'usage.raw', id: '0d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f60', variantOf: () => null };

/**
 * Damage to one file of a compacted dataset (docs/damaged-data.md): the file is left out and
 * named (skippedFiles, X-Skipped-Files, inspectSources) and every other file is served; a head
 * that cannot be read falls back to its data file. Never a 503 "kept changing", never a 500.
 */
describe('a damaged file of a compacted dataset never takes its source down', () => {
  const tmp = tempDir('le-damaged-');
  const template = tmp.path('template');
  let files: DataFile[] = [];
  beforeAll(async () => {
    writeLines(tmp.path('in', 'a.ndjson'), censusEvents('d', 300));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path('in', '*.ndjson'), outDir: template });
    files = [...readDatasetState(template).files.values()].sort((a, b) => a.path.localeCompare(b.path));
  });
  afterAll(() => tmp.cleanup());

  /** A copy of the dataset for one case; its first data file is the victim. */
  let n = 0;
  const fresh = () => {
    const dir = tmp.path(`case-${++n}`);
    cpSync(template, dir, { recursive: true });
    return { dir, victim: files[0]!, path: join(dir, files[0]!.path) };
  };
  /** The ids of a data file (each census id is `d-<i>`; the file's rows are those of its day). */
  const idsOf = async (dir: string, file: DataFile) => {
    const { ep } = await endpointsAt({ edgeLogs: join(dir, file.path) }, CENSUS_NOW);
    try {
      return (await census(ep)).ids;
    } finally {
      await ep.close();
    }
  };

  const kinds: Record<string, { damage: (path: string) => void; reasons: string[] }> = {
    'cut short': { damage: (p) => truncateSync(p, Math.floor(readFileSync(p).length / 2)), reasons: ['not_parquet'] },
    deleted: { damage: (p) => rmSync(p), reasons: ['missing'] },
    unreadable: { damage: (p) => (rmSync(p), mkdirSync(p)), reasons: ['unreadable'] },
    'corrupted pages (size and footer intact)': {
      damage: (p) => {
        const bytes = readFileSync(p);
        const footer = bytes.readUInt32LE(bytes.length - 8);
        bytes.fill(7, 4, bytes.length - 8 - footer);
        writeFileSync(p, bytes);
      },
      // Seen by its checksum before the engine reads a page.
      reasons: ['checksum_mismatch'],
    },
  };

  for (const [kind, { damage, reasons }] of Object.entries(kinds)) {
    it(`a data file ${kind}: left out and named, the rest served`, async () => {
      const { dir, victim, path } = fresh();
      const lost = await idsOf(dir, victim);
      expect(lost.length).toBe(victim.rows);
      damage(path);
      const { ep } = await endpointsAt({ edgeLogs: dir }, CENSUS_NOW, { endpoints: [rawUsage] });
      try {
        // Its head and stored rollups are intact and hold its events: until a query reads the file
        // itself (damage inside the pages shows only then), answers from them count it. One does.
        await ep.query('usage.raw', { project: '.', interval: 'daily' });
        const everyone = idRange('d', 0, 300);
        expect(await census(ep)).toEqual({ total: 300 - victim.rows, ids: everyone.filter((id) => !lost.includes(id)) });
        const answer = await ep.query('usage.api-counts', { project: '.', interval: 'daily' });
        expect(answer.skippedFiles).toEqual([{ path, reason: expect.toBeOneOf(reasons), message: expect.any(String) }]);
        const [edge] = await ep.inspectSources();
        expect(edge!.skippedFiles).toEqual([expect.objectContaining({ path })]);
        const response = await createHandler(ep, { auth: false })(new Request('http://x/api/endpoints/logs.all?project=p0&project_tier=PAYG'));
        expect(response.status).toBe(200);
        const named = victim.path.split('/').map(encodeURIComponent).join('/');
        expect(response.headers.get('X-Skipped-Files')).toMatch(new RegExp(`^${named.replace(/[.]/g, '\\.')};reason=(${reasons.join('|')})$`));
      } finally {
        await ep.close();
      }
    });
  }

  it('a file named wrongly in a commit: named as missing, the rest served', async () => {
    const { dir, victim } = fresh();
    const state = readDatasetState(dir);
    const wrong = `date=${victim.day}/part-0000000000000000-9.parquet`;
    expect(await appendCommit(state, { source: 'edgeLogs', add: [{ ...victim, path: wrong, head: undefined }], remove: [], inputs: [] })).toBe(true);
    const { ep } = await endpointsAt({ edgeLogs: dir }, CENSUS_NOW);
    try {
      expect(await census(ep)).toEqual({ total: 300, ids: idRange('d', 0, 300) });
      expect((await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' })).skippedFiles).toEqual([{ path: join(dir, wrong), reason: 'missing', message: expect.any(String) }]);
    } finally {
      await ep.close();
    }
  });

  const heads: Record<string, (path: string) => void> = {
    deleted: (p) => rmSync(p),
    'cut short': (p) => truncateSync(p, 100),
    'corrupted pages': (p) => {
      const bytes = readFileSync(p);
      const footer = bytes.readUInt32LE(bytes.length - 8);
      bytes.fill(7, 4, bytes.length - 8 - footer);
      writeFileSync(p, bytes);
    },
  };
  for (const [kind, damage] of Object.entries(heads)) {
    it(`a head ${kind}: logs.all reads its data file instead, nothing is left out`, async () => {
      const { dir, victim } = fresh();
      damage(join(dir, victim.head!.path));
      const { ep } = await endpointsAt({ edgeLogs: dir }, CENSUS_NOW, { sandboxable: ['logs.all'] });
      try {
        expect(await census(ep)).toEqual({ total: 300, ids: idRange('d', 0, 300) });
        expect((await ep.query('logs.all', { project: 'p0', project_tier: 'PAYG' })).skippedFiles).toEqual([]);
        // A caller's newest rows (Studio's list) read the heads too, from the tables in memory: the same rows.
        const sql = 'select id from (select * from edge_logs order by timestamp desc nulls last limit 100) as e';
        for (const project of ['p0', 'p1']) {
          const caller = (await ep.query('logs.all', { project, project_tier: 'PAYG' }, { sql })).result.map((r) => (r as { id: string }).id);
          expect(caller.sort()).toEqual((await ep.logsAll({ project, project_tier: 'PAYG' })).map((r) => r.id).sort());
        }
      } finally {
        await ep.close();
      }
    });
  }
});
