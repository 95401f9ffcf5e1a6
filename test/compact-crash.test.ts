import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { runCli, spawnCli } from './support/cli';
import { edgeEvent, endpointsAt, tempDir, writeLines } from './support/log-files';

/**
 * Compaction killed with SIGKILL at every point of its data path (the failpoints of
 * src/util/failpoint.ts), then run again: every event is in the result exactly once, the
 * inputs are deleted only once their events are committed, and nothing of the killed run is left.
 */
describe('compact killed at any point, then run again: nothing lost, nothing doubled', () => {
  const tmp = tempDir('le-compact-kill-');
  afterAll(() => tmp.cleanup());

  const points = ['compact:written', 'compact:publish:1', 'compact:publish:2', 'compact:before-commit', 'compact:after-commit', 'compact:delete:1', 'compact:delete:2', 'compact:deleted'];
  for (const point of points) {
    it(`killed at ${point}`, async () => {
      const logs = tmp.path(point.replaceAll(':', '-'), 'logs');
      const out = tmp.path(point.replaceAll(':', '-'), 'out');
      // Two files already compacted, three new ones (one kept for its broken line).
      writeLines(join(logs, 'old-1.ndjson'), censusEvents('o1', 40));
      writeLines(join(logs, 'old-2.ndjson'), censusEvents('o2', 40));
      expect((await runCli(['compact', '--source', 'edge', '--input', join(logs, '*.ndjson'), '--out', out])).code).toBe(0);
      writeLines(join(logs, 'new-1.ndjson'), censusEvents('n1', 60));
      writeLines(join(logs, 'new-2.ndjson'), censusEvents('n2', 60));
      writeLines(join(logs, 'new-3.ndjson'), [...censusEvents('n3', 30), '{"cut": "short', ...censusEvents('n3', 30, 30)]);
      const expected = [...idRange('o1', 0, 40), ...idRange('o2', 0, 40), ...idRange('n1', 0, 60), ...idRange('n2', 0, 60), ...idRange('n3', 0, 60)].sort();

      const args = ['compact', '--source', 'edge', '--input', join(logs, '*.ndjson'), '--out', out, '--delete-source'];
      const killed = spawnCli(args, { LOG_ENDPOINTS_FAILPOINT: point });
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => killed.on('exit', (_code, s) => resolve(s)));
      expect(signal, killed.output.stderr).toBe('SIGKILL');

      // Between the kill and the rerun, a query over the inputs and the dataset sees each event once.
      const between = await endpointsAt({ edgeLogs: [join(logs, '*.ndjson'), out] }, CENSUS_NOW);
      try {
        expect(await census(between.ep)).toEqual({ total: expected.length, ids: expected });
      } finally {
        await between.ep.close();
      }

      const rerun = await runCli(args);
      expect(rerun.code, rerun.stderr).toBe(0);
      const after = await endpointsAt({ edgeLogs: out }, CENSUS_NOW);
      try {
        expect(await census(after.ep)).toEqual({ total: expected.length, ids: expected });
      } finally {
        await after.ep.close();
      }
      // Deleted: every input whose events are all committed; kept: the one with a broken line.
      expect(readdirSync(logs).sort()).toEqual(['new-3.ndjson']);
      expect(readdirSync(out).filter((f) => f.startsWith('.'))).toEqual([]);
      const third = await runCli(args);
      expect(third.stdout).toContain('Nothing new');
    });
  }
});

/**
 * While compactions move events from NDJSON files into the dataset and delete the files, a query
 * over both reads every event exactly once: counted at every answer, with ids.
 */
describe('queries during compaction see every event exactly once', () => {
  const tmp = tempDir('le-compact-handover-');
  afterAll(() => tmp.cleanup());

  it('count and distinct ids equal the input at every answer, across rounds with new files', async () => {
    const logs = tmp.path('logs');
    const out = tmp.path('out');
    const bulkEvent = (round: number, i: number) =>
      edgeEvent({ id: `bulk-${round}-${i}`, project: 'bulk', path: '/rest/v1/bulk', timestamp: new Date(Date.parse(CENSUS_NOW) - 3_600_000 - i * 1000).toISOString() });
    const { ep } = await endpointsAt({ edgeLogs: [join(logs, '*.ndjson'), out] }, CENSUS_NOW);
    let written = 0;
    const checkedIds: string[] = [];
    let answers = 0;
    try {
      for (let round = 0; round < 4; round++) {
        // Each round's file: checked events in the census projects, and bulk that makes the run longer.
        const checked = censusEvents(`r${round}`, 40);
        const bulk = Array.from({ length: 3000 }, (_, i) => bulkEvent(round, i));
        writeLines(join(logs, `round-${round}.ndjson`), [...checked, ...bulk]);
        written += checked.length + bulk.length;
        checkedIds.push(...checked.map((e) => e.id as string));
        const child = spawnCli(['compact', '--source', 'edge', '--input', join(logs, '*.ndjson'), '--out', out, '--delete-source']);
        let running = true;
        const exited = new Promise<number | null>((resolve) =>
          child.on('exit', (code) => {
            running = false;
            resolve(code);
          }),
        );
        const expectedIds = [...checkedIds].sort();
        do {
          const { total, ids } = await census(ep);
          answers++;
          expect(total).toBe(written);
          expect(ids).toEqual(expectedIds);
        } while (running);
        expect(await exited, child.output.stderr).toBe(0);
        expect(existsSync(join(logs, `round-${round}.ndjson`))).toBe(false);
      }
      expect(await census(ep)).toEqual({ total: written, ids: [...checkedIds].sort() });
      expect(answers).toBeGreaterThan(8);
    } finally {
      await ep.close();
    }
  });
});
