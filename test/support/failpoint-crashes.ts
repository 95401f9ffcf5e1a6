import { cpSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoints, defineEndpoint, type Endpoints } from '../../src/index';
import type { SourceName } from '../../src/sources/source-descriptor';
import { DATASET_FAILPOINTS } from '../../src/util/failpoint';
import { spawnCli, waitForStdout } from './cli';
import { HANG_MS } from './hang-guard';
import { HISTORY_SOURCES, ManagedHistory } from './managed-history';
import { tempDir } from './log-files';

/** The history's clock; the killed server and the restarts run three days later (retention drops OLD). */
const HISTORY_NOW = '2026-11-21T12:00:00Z';
const SERVE_NOW = '2026-11-24T12:00:00Z';
const D1 = '2026-11-20';
const D2 = '2026-11-21';
/** 88 days before the history's clock: kept by it, past retention (90 days) for the server. */
const OLD = '2026-08-25';
const at = (day: string) => [`${day}T01:00:00.000000Z`, `${day}T07:30:00.000000Z`, `${day}T10:15:00.000000Z`];
const KEY = 'crash-key';

/**
 * Every id a source serves with how many times it is read, and (as the row of id '#rollup') the
 * events its stored rollup counts: one statement, so both are of one snapshot (the compaction of
 * the restarted server runs meanwhile, and its retention drops a day).
 */
const census = (relation: string, rollup: string, counted: string) =>
  defineEndpoint({
    name: `census.${relation}`,
    sql: {
      duckdb: `SELECT id, count(*)::INTEGER AS copies FROM ${relation} GROUP BY id
               UNION ALL SELECT '#rollup' AS id, coalesce(sum(${counted}), 0)::INTEGER AS copies FROM ${rollup}`,
    },
    maxRows: 1_000_000,
    columns: { id: 'text', copies: 'integer' },
  });
const CENSUS: Record<string, { relation: string; endpoint: ReturnType<typeof census> }> = {
  edgeLogs: { relation: 'edge_logs', endpoint: census('edge_logs', 'edge_logs_url_hourly', 'rest_requests') },
  functionEdgeLogs: { relation: 'function_edge_logs', endpoint: census('function_edge_logs', 'function_edge_logs_hourly', 'count') },
};
const ALL_CENSUS = Object.values(CENSUS).map((c) => c.endpoint);

/**
 * The failpoints of the dataset's write paths, each numbered one at the first and the second file
 * (the run the server starts with publishes two files, deletes two segments, merges eight files,
 * prunes many commits); retention drops one file (the history's one run of OLD).
 */
export const CRASH_POINTS = DATASET_FAILPOINTS.flatMap((p) => (p.includes('<n>') ? [p.replace('<n>', '1'), p.replace('<n>', '2')] : [p])).filter((p) => p !== 'retention:deleted:2');

interface Template {
  acked: Record<string, string[]>;
  /** Acknowledged ids of the day past the server's retention. */
  old: Set<string>;
}

/**
 * A data dir with a history, so that the first compaction run of a server started on it meets
 * every failpoint of `DATASET_FAILPOINTS` for each source: 32 compaction runs (merges of merged
 * files among them, the records of 64 deleted segments forgotten, a checkpoint), a day held in
 * one merged file (the next compaction adds a second, and small files of a day merge:
 * merge-policy.ts), a day past the server's retention, files lacking their stored rollups, a checkpoint
 * due at the next commit, the records of 62 deleted segments, and two closed segments left to
 * compact (their deletion makes 64 again).
 */
async function buildTemplate(dataDir: string): Promise<Template> {
  const history = await ManagedHistory.open(dataDir, new Date(HISTORY_NOW));
  const old = new Set<string>();
  try {
    await Promise.all(
      HISTORY_SOURCES.map(async (source) => {
        for (const id of await history.segment(source, 6, at(OLD))) old.add(id);
        for (let run = 0; run < 32; run++) {
          await history.segment(source, 12, [...at(D1), ...at(D2)]);
          if (run !== 0) await history.segment(source, 12, [...at(D2), ...at(D1)]);
          await history.compact(source);
        }
        // 64 segments were deleted: their records were forgotten.
        expect(history.goneInputs(source)).toBe(0);
        while (history.goneInputs(source) < 62) {
          for (let i = Math.min(4, 62 - history.goneInputs(source)); i > 0; i--) await history.segment(source, 3, at(D2));
          await history.compact(source);
        }
        // D1 is one merged file: the server's first compaction adds another, which it merges.
        expect(history.filesOfDay(source, D1)).toBe(1);
        expect(history.goneInputs(source)).toBe(62);
        await history.withoutRollups(source, D2);
        await history.segment(source, 10, [...at(D1), ...at(D2)]);
        await history.segment(source, 10, [...at(D2), ...at(D1)]);
        // The first commit of the server's run is at least the 32nd since the last checkpoint.
        await history.emptyCommits(source, Math.max(0, 31 - history.commitsSinceCheckpoint(source)));
        // The two segments stay for the server's first run (no run of the history's took them).
        expect(history.closedSegments(source)).toBe(2);
      }),
    );
    return { acked: history.acked, old };
  } finally {
    await history.close();
  }
}

/**
 * Kills a real `serve --data-dir` at every failpoint of the dataset's write paths of `source`,
 * each time on a copy of a data dir with a history (see `buildTemplate`), while a client ingests;
 * then restarts it (twice: once right away, once after its compaction ran) and counts every id:
 * each acknowledged event exactly once, whatever the stored rollups or the files say.
 */
export function describeFailpointCrashes(source: SourceName): void {
  const tmp = tempDir(`le-failpoints-${source}-`);
  // Each case runs at the path the history was written at (the log's input records name their
  // segments by absolute path), from a copy of it taken once.
  const dataDir = tmp.path('data');
  const template = tmp.path('template');
  let history: Template = { acked: {}, old: new Set() };
  const children: ReturnType<typeof spawnCli>[] = [];
  beforeAll(async () => {
    history = await buildTemplate(dataDir);
    cpSync(dataDir, template, { recursive: true });
  });
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    tmp.cleanup();
  });

  describe(`serve --data-dir killed at every failpoint of ${source}'s dataset, with history: 0 lost, 0 doubled`, () => {
    for (const point of CRASH_POINTS) {
      it(`killed at ${point}`, async () => {
        rmSync(dataDir, { recursive: true, force: true });
        cpSync(template, dataDir, { recursive: true });
        const child = spawnCli(['serve', '--data-dir', dataDir, '--api-key', KEY, '--port', '0', '--now', SERVE_NOW, '--no-cache'], {
          LOG_ENDPOINTS_FAILPOINT: `${point}@${source}`,
        });
        children.push(child);
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
        const acked = { edgeLogs: [...history.acked.edgeLogs!], functionEdgeLogs: [...history.acked.functionEdgeLogs!] } as Record<string, string[]>;
        const sent: Record<string, string[]> = { edgeLogs: [], functionEdgeLogs: [] };
        let dead = false;
        void exited.then(() => (dead = true));
        // A client sends small batches to both sources until the server is gone.
        const url = await waitForStdout(child, /Listening on (http:\/\/\S+) /).then(
          (m) => m[1]!,
          () => null,
        );
        // Until the server kills itself (a hang guard, should it never reach the failpoint).
        const deadline = Date.now() + HANG_MS;
        for (let batch = 0; url && !dead && Date.now() < deadline; batch++) {
          for (const [name, ingestName] of [
            ['edgeLogs', 'cloudflare.logs.prod'],
            ['functionEdgeLogs', 'deno-relay-logs'],
          ] as const) {
            const events = liveEvents(name, batch);
            sent[name]!.push(...events.map((e) => e.id));
            try {
              const response = await fetch(`${url}/api/logs?source_name=${ingestName}`, {
                method: 'POST',
                headers: { 'X-API-KEY': KEY, 'Content-Type': 'application/json' },
                body: JSON.stringify(events),
              });
              await response.arrayBuffer();
              if (response.status === 200) acked[name]!.push(...events.map((e) => e.id));
            } catch {
              // Killed under this request: not acknowledged.
            }
          }
        }
        if (!dead) child.kill('SIGTERM');
        expect(await exited, `the server did not reach ${point}: ${child.output.stderr}`).toBe('SIGKILL');

        // Right after the restart (its compaction not yet run), then once that compaction ran.
        for (const round of ['restarted', 'after its compaction']) {
          const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(SERVE_NOW), cache: false, endpoints: ALL_CENSUS });
          try {
            for (const s of HISTORY_SOURCES) await expectExactlyOnce(ep, s, acked[s]!, sent[s]!, history.old, `${round}, ${s}`);
          } finally {
            await ep.close();
          }
        }
      });
    }
  });
}

/** Events a client sends to the killed server: of today, so retention keeps them. */
function liveEvents(source: string, batch: number): Array<Record<string, unknown> & { id: string }> {
  return Array.from({ length: 3 }, (_, i) => {
    const id = `${source === 'edgeLogs' ? 'le' : 'lf'}-${batch}-${i}`;
    const timestamp = `${D2}T11:${String(batch % 60).padStart(2, '0')}:0${i}.000000Z`;
    return source === 'edgeLogs'
      ? { id, timestamp, project: 'p0', event_message: 'GET', metadata: { request: { method: 'GET', path: '/rest/v1/live', url: 'https://p0.supabase.co/rest/v1/live' } } }
      : { id, timestamp, event_message: 'POST', metadata: { project_ref: 'p0', function_id: 'f0', execution_time_ms: 5, response: { status_code: 200 } } };
  });
}

/**
 * Every acknowledged event of the source is read exactly once (those of the day past retention
 * at most once: retention may have dropped them), an event sent but not acknowledged at most
 * once, nothing else is read, and the stored rollup counts what the rows hold.
 */
async function expectExactlyOnce(ep: Endpoints, source: string, acked: readonly string[], sent: readonly string[], old: ReadonlySet<string>, label: string): Promise<void> {
  const { relation } = CENSUS[source]!;
  const answer = (await ep.query(`census.${relation}`, {})).result as Array<{ id: string; copies: number }>;
  const rows = answer.filter((r) => r.id !== '#rollup');
  const copies = new Map(rows.map((r) => [r.id, r.copies]));
  const doubled = rows.filter((r) => r.copies > 1).map((r) => r.id);
  const lost = acked.filter((id) => !old.has(id) && !copies.has(id));
  const known = new Set([...acked, ...sent]);
  expect({ label, lost: lost.length, doubled: doubled.length, unknown: rows.filter((r) => !known.has(r.id)).length }).toEqual({ label, lost: 0, doubled: 0, unknown: 0 });
  const events = rows.reduce((n, r) => n + r.copies, 0);
  expect({ label, rollup: answer.find((r) => r.id === '#rollup')?.copies }).toEqual({ label, rollup: events });
}
