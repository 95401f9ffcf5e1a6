/**
 * The failpoints of the write paths of a compacted dataset and of managed storage, in the order a
 * background compaction run meets them (`<n>`: the n-th file, 1, 2, ...): a compaction (its run
 * written, each file published, the commit, each input deleted), the companions of a file (a
 * stored rollup placed), the release of a write-ahead segment, a checkpoint of the log, the
 * backfill of stored rollups, the merge of a day's small files, retention and the forgetting of
 * deleted inputs. The crash suite kills a real server at each of them (test/crash-failpoints*.test.ts).
 */
export const DATASET_FAILPOINTS = [
  'compact:written',
  'rollup:written',
  'compact:publish:<n>',
  'compact:before-commit',
  'compact:after-commit',
  'checkpoint:written',
  'checkpoint:pruned:<n>',
  'backfill:before-commit',
  'backfill:after-commit',
  'compact:delete:<n>',
  'wal:unlinked',
  'compact:deleted',
  'merge:written',
  'merge:after-commit',
  'merge:deleted:<n>',
  'merge:deleted',
  'retention:after-commit',
  'retention:deleted:<n>',
  'forget:after-commit',
] as const;

/**
 * The failpoint of ingest: a batch fsynced (and remembered among the recent bodies), its answer
 * not yet sent (test/crash-retries.test.ts: the lost acknowledgement).
 */
export const INGEST_FAILPOINTS = ['ingest:durable'] as const;

/** The failpoints of managed storage's ClickHouse shipper (test/integration/clickhouse-ingest.test.ts). */
export const SHIP_FAILPOINTS = ['ship:attempt-recorded', 'ship:mid-insert', 'ship:batch-inserted', 'ship:inserted', 'ship:released'] as const;

/**
 * Crash tests kill a real process at exact points of the data path: with
 * `LOG_ENDPOINTS_FAILPOINT=<name>` in its environment, the process sends itself SIGKILL when it
 * reaches that point (no cleanup runs, as in a power cut of the process); with
 * `<name>@<source>`, only when it reaches it for that source (`merge:after-commit@functionEdgeLogs`).
 * Unset, this is a no-op. The names are `DATASET_FAILPOINTS`, `INGEST_FAILPOINTS` and `SHIP_FAILPOINTS`.
 */
export function failpoint(name: string, source?: string): void {
  const wanted = process.env.LOG_ENDPOINTS_FAILPOINT;
  if (wanted === undefined) return;
  if (wanted === name || (source !== undefined && wanted === `${name}@${source}`)) process.kill(process.pid, 'SIGKILL');
}

/**
 * The points a test can hold a real process at (`LOG_ENDPOINTS_HOLD=<name>`): the background
 * recovery of a write-ahead log; an ingest batch fsynced, its answer not yet sent.
 */
export const HOLDPOINTS = ['wal:recovery', 'ingest:durable'] as const;

let released = false;
let listening = false;
const waiting: Array<() => void> = [];

/**
 * With `LOG_ENDPOINTS_HOLD=<name>` in its environment, the process waits at that point until it
 * gets SIGUSR2 (it prints `held <name>` on stderr each time one waits), so a test can prove what
 * happens before the point is passed without any timing. Unset (or another name), it resolves at once.
 */
export function holdpoint(name: (typeof HOLDPOINTS)[number]): Promise<void> {
  if (process.env.LOG_ENDPOINTS_HOLD !== name || released) return Promise.resolve();
  if (!listening) {
    listening = true;
    process.on('SIGUSR2', () => {
      released = true;
      for (const resume of waiting.splice(0)) resume();
    });
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    process.stderr.write(`held ${name}\n`);
  });
}
