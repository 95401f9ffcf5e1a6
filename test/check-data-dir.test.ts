import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import { checkDataDir } from '../src/index';
import { compactLogs } from '../src/compaction/compact';
import { readDatasetStateStable } from '../src/dataset/dataset-log';
import { datasetDir } from '../src/managed/managed-inputs';
import { openWalSet, walDir } from '../src/managed/wal/wal-set';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { memoryIO } from './support/cli';
import { endpointsAt, tempDir, writeLines } from './support/log-files';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';

const tmp = tempDir('le-check-');
afterAll(() => tmp.cleanup());

/** A data dir whose gateway dataset has three commits (a, b, c: 40, 60, 80 events). */
async function dataDirWithDataset(name: string): Promise<{ dataDir: string; dataset: string }> {
  const dataDir = tmp.path(name);
  await (await openWalSet(dataDir, BUILT_IN_SOURCE_SET)).close();
  const dataset = datasetDir(dataDir, 'edgeLogs');
  for (const [i, prefix] of ['a', 'b', 'c'].entries()) {
    writeLines(tmp.path(`${name}-in`, `${prefix}.ndjson`), censusEvents(prefix, 40 + 20 * i));
    await compactLogs({ source: 'edgeLogs', inputs: tmp.path(`${name}-in`, `${prefix}.ndjson`), outDir: dataset, deleteSource: true });
  }
  return { dataDir, dataset };
}
const check = async (...args: string[]) => {
  const { io, out } = memoryIO();
  const code = await main(['check', ...args], io, 'test');
  return { code, ...out };
};

describe('log-endpoints check --data-dir', () => {
  it('an intact data dir: exit 0', async () => {
    const { dataDir } = await dataDirWithDataset('intact');
    const result = await check('--data-dir', dataDir);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/edgeLogs: \d+ WAL segments?, 3 commits, \d+ data files checked/);
    expect(result.stdout).toContain(`${dataDir} is intact.`);
  });

  it('finds each kind of damage; --repair restores what can be restored and says what it did', async () => {
    const { dataDir, dataset } = await dataDirWithDataset('damaged');
    const log = join(dataset, '_compact');
    rmSync(join(log, `${'3'.padStart(20, '0')}.json`)); // the newest commit lost: c's files are orphans
    const state = readDatasetStateStable(dataset);
    const [first, second] = [...state.files.values()].filter((f) => f.path.includes('part-')).sort((x, y) => x.path.localeCompare(y.path));
    rmSync(join(dataset, first!.path)); // a committed file deleted
    writeFileSync(join(dataset, second!.head!.path), 'garbage'); // a head garbled
    const found = await check('--data-dir', dataDir);
    expect(found.code).toBe(1);
    expect(found.stdout).toMatch(/commit_log .*00000000000000000003\.json: commit 3 is missing/);
    expect(found.stdout).toContain(`committed_file ${join(dataset, first!.path)}: missing`);
    expect(found.stdout).toContain(`committed_file ${join(dataset, second!.head!.path)}: not_parquet`);
    expect(found.stdout).toMatch(/orphan_file .*part-.*\.parquet: no commit names it/);
    expect(found.stdout).toMatch(/\d+ problems found; log-endpoints check --repair restores/);

    const repaired = await check('--data-dir', dataDir, '--repair');
    expect(repaired.stdout).not.toMatch(/problem/);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toMatch(/Repaired: edgeLogs: put \d+ file\(s\) of lost commits back into the log/);
    expect(repaired.stdout).toMatch(/Repaired: edgeLogs: took 1 missing or unreadable file\(s\) out of the log/);
    expect(repaired.stdout).toMatch(/Repaired: edgeLogs: wrote 1 of 1 damaged head\(s\) or stored rollup\(s\) again from their data files \(the damaged ones moved to .*_quarantine/);
    expect(repaired.stdout).toContain('is intact.');
    expect(readdirSync(join(dataset, '_quarantine'), { recursive: true })).toContain(second!.head!.path);

    // Every event but those of the deleted file is served, once, and nothing is reported any more.
    const { ep } = await endpointsAt({ edgeLogs: dataset }, CENSUS_NOW);
    try {
      const lost = first!.rows;
      const answer = await census(ep);
      expect(answer.total).toBe(180 - lost);
      expect(new Set(answer.ids).size).toBe(180 - lost);
      expect(answer.ids.filter((id) => id.startsWith('c-'))).toEqual(idRange('c', 0, 80).filter((id) => answer.ids.includes(id)));
      expect((await ep.query('usage.api-counts', { project: '.', interval: 'daily' })).skippedFiles).toEqual([]);
    } finally {
      await ep.close();
    }
    expect((await checkDataDir(dataDir)).problems).toEqual([]);
  });

  it('a write-ahead segment with a torn tail is reported (recovery cuts it at the next start)', async () => {
    const dataDir = tmp.path('torn');
    await (await openWalSet(dataDir, BUILT_IN_SOURCE_SET)).close();
    writeFileSync(join(walDir(dataDir, 'edgeLogs'), '00000000000000000009.ndjson'), '{"id":"half written"');
    const result = await check('--data-dir', dataDir);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/wal_segment .*00000000000000000009\.ndjson: does not end with a commit marker/);
  });

  it('--repair is refused while another process writes the data dir; wrong usage is exit 2', async () => {
    const { dataDir } = await dataDirWithDataset('live');
    const live = await openWalSet(dataDir, BUILT_IN_SOURCE_SET);
    try {
      const refused = await check('--data-dir', dataDir, '--repair');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/The data dir .+ is in use/);
    } finally {
      await live.close();
    }
    expect((await check()).code).toBe(2);
  });
});
