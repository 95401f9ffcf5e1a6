import { sep } from 'node:path';
import type { SourceName } from '../../src/sources/source-descriptor';
import { appendCommit, readDatasetStateStable } from '../../src/dataset/dataset-log';
import { BackgroundCompactor } from '../../src/managed/background-compactor';
import { datasetDir } from '../../src/managed/managed-inputs';
import { openWalSet, walDir, type WalSet } from '../../src/managed/wal/wal-set';
import { Ingestor } from '../../src/managed/ingestor';
import { SourceNames } from '../../src/ingest/source-names';
import { BUILT_IN_SOURCE_SET } from '../../src/sources/built-ins';
import { edgeEvent, functionEvent } from './log-files';

/** The two built-in sources, each driven through its own write-ahead log and background compactor. */
export const HISTORY_SOURCES: readonly SourceName[] = ['edgeLogs', 'functionEdgeLogs'];

/**
 * A data dir driven step by step, in process, through the real write-ahead log, ingest path and
 * background compactor (the pieces `serve --data-dir` runs), so a test can give a data dir a
 * history before something happens to it: segments closed on demand, each compaction run awaited.
 * Every event it ingests is acknowledged (`acked`).
 */
export class ManagedHistory {
  readonly acked: Record<string, string[]> = { edgeLogs: [], functionEdgeLogs: [] };
  private next = 0;

  private constructor(
    readonly dataDir: string,
    private readonly set: WalSet,
    private readonly ingestor: Ingestor,
    private readonly compactors: Record<string, BackgroundCompactor>,
    /** The sources whose runs may go ahead now: only inside `compact` (see `open`). */
    private readonly running: Set<SourceName>,
  ) {}

  /** Opens (creating) the data dir at the instant `now` (retention judges days by it). */
  static async open(dataDir: string, now: Date): Promise<ManagedHistory> {
    // Segments close only when asked (`segment`).
    const set = await openWalSet(dataDir, BUILT_IN_SOURCE_SET, { maxSegmentBytes: 1 << 30, maxSegmentAgeMs: 1e9, segmentQuietMs: 1e9 });
    const ingestor = new Ingestor(set, new SourceNames(BUILT_IN_SOURCE_SET), () => now);
    const compactors: Record<string, BackgroundCompactor> = {};
    // The compactor also starts runs of its own (a timer for retention and retries, 30 s after the
    // last run; a day turned quiet). On a loaded machine building a history takes longer than that,
    // and such a run compacted the segments a history leaves closed on purpose: runs go ahead
    // only inside `compact`, when the test asks.
    const running = new Set<SourceName>();
    for (const source of HISTORY_SOURCES) {
      const wal = set.wals[source]!;
      compactors[source] = new BackgroundCompactor({
        source: BUILT_IN_SOURCE_SET.get(source),
        sources: BUILT_IN_SOURCE_SET,
        datasetDir: datasetDir(set.dataDir, source),
        walDir: walDir(set.dataDir, source),
        wal: {
          closedSegments: () => wal.closedSegments(),
          release: (paths) => wal.release(paths),
          verify: (path) => wal.verify(path),
          // Runs start when the test asks (`compact`), not when a segment closes.
          onSegmentClosed: () => () => undefined,
        },
        retentionDays: 90,
        now: () => now,
        lane: <T>(work: () => Promise<T>): Promise<T> => (running.has(source) ? work() : Promise.resolve(undefined as T)),
        onError: (error) => {
          throw error;
        },
      });
    }
    return new ManagedHistory(set.dataDir, set, ingestor, compactors, running);
  }

  /** One closed segment of `source` holding `count` acknowledged events at the given instants (cycled). */
  async segment(source: SourceName, count: number, at: readonly string[]): Promise<string[]> {
    const events = Array.from({ length: count }, (_, i) => this.event(source, at[i % at.length]!));
    await this.ingestor.ingest(source, events);
    await this.set.wals[source]!.roll();
    const ids = events.map((e) => e.id as string);
    this.acked[source]!.push(...ids);
    return ids;
  }

  /** One run of the source's background compactor (its closed segments, merges, retention, forgetting). */
  async compact(source: SourceName): Promise<void> {
    const compactor = this.compactors[source]!;
    this.running.add(source);
    try {
      compactor.trigger();
      await compactor.settled();
    } finally {
      this.running.delete(source);
    }
    if (compactor.counters.failures) throw new Error(`compaction of ${source} failed`);
  }

  /** The dataset's data files of a day. */
  filesOfDay(source: SourceName, day: string): number {
    return [...readDatasetStateStable(datasetDir(this.dataDir, source)).files.values()].filter((f) => f.day === day).length;
  }

  /** Commits since the dataset's newest checkpoint (a checkpoint is written once 32 piled up). */
  commitsSinceCheckpoint(source: SourceName): number {
    const root = datasetDir(this.dataDir, source);
    const state = readDatasetStateStable(root);
    const checkpoint = Math.max(
      0,
      ...state.version
        .split(',')
        .map((n) => /^(\d{20})\.checkpoint\.json$/.exec(n))
        .filter((m) => m !== null)
        .map((m) => Number(m![1])),
    );
    return state.seq - checkpoint;
  }

  /** Empty commits (nothing added or removed), to bring the next checkpoint to a chosen commit. */
  async emptyCommits(source: SourceName, count: number): Promise<void> {
    const root = datasetDir(this.dataDir, source);
    for (let i = 0; i < count; i++) {
      if (!(await appendCommit(readDatasetStateStable(root), { source, add: [], remove: [], inputs: [] }))) throw new Error('commit refused');
    }
  }

  /**
   * Re-adds every data file of `day` without its stored rollups, as a dataset compacted by an
   * earlier version holds them: the next compaction run writes them again (its backfill).
   */
  async withoutRollups(source: SourceName, day: string): Promise<void> {
    const root = datasetDir(this.dataDir, source);
    const state = readDatasetStateStable(root);
    const bare = [...state.files.values()].filter((f) => f.day === day).map(({ rollups: _r, ...f }) => f);
    if (!(await appendCommit(state, { source, add: bare, remove: [], inputs: [] }))) throw new Error('commit refused');
  }

  /** Closed segments of the source waiting for a run. */
  closedSegments(source: SourceName): number {
    return this.set.wals[source]!.closedSegments().length;
  }

  /** Records of deleted segments the dataset keeps (forgotten in bulk once 64 pile up). */
  goneInputs(source: SourceName): number {
    const state = readDatasetStateStable(datasetDir(this.dataDir, source));
    return new Set(state.inputs.filter((r) => r.path.startsWith(walDir(this.dataDir, source) + sep)).map((r) => r.path)).size;
  }

  async close(): Promise<void> {
    for (const compactor of Object.values(this.compactors)) await compactor.stop();
    await this.set.close();
  }

  private event(source: SourceName, timestamp: string): Record<string, unknown> {
    const n = this.next++;
    const id = `${source === 'edgeLogs' ? 'e' : 'f'}-${String(n).padStart(7, '0')}`;
    return source === 'edgeLogs'
      ? edgeEvent({ id, project: `p${n % 5}`, timestamp, path: '/rest/v1/history' })
      : functionEvent({ id, project: `p${n % 5}`, functionId: `f${n % 3}`, timestamp, ms: n % 700 });
  }
}
