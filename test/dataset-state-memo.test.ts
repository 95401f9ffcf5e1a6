import { copyFileSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendCommit, checkpointIfDue, ensureDataset, logWritesOf, readDatasetStateStable, type DatasetState } from '../src/dataset/dataset-log';
import { DatasetStateMemo } from '../src/dataset/dataset-state-memo';
import { tempDir } from './support/log-files';

// What a query's snapshot reads of a dataset's log (src/dataset/dataset-state-memo.ts): the state
// read before while nothing can have been committed since, read again after any commit, by this
// process or another. No test waits: the reads are told the time (an hour on), and the log folder
// is dated an hour back, so a folder nobody writes to looks settled, and any write dates it now.

const tmp = tempDir('le-state-memo-');
afterAll(() => tmp.cleanup());

const HOUR = 3_600_000;
const later = () => Date.now() + HOUR;
let datasets = 0;

async function dataset(commits: number): Promise<string> {
  const root = tmp.path(`dataset-${++datasets}`);
  await ensureDataset(root);
  for (let i = 0; i < commits; i++) await commit(root, i);
  return root;
}

/** A commit adding one data file (the log alone matters here: nothing reads the file). */
async function commit(root: string, n: number): Promise<void> {
  const file = { path: `date=2026-11-21/part-${n}.parquet`, rows: 1, bytes: 10, day: '2026-11-21' };
  expect(await appendCommit(readDatasetStateStable(root), { source: 'edgeLogs', add: [file], remove: [], inputs: [] })).toBe(true);
}

/** The log folder dated an hour back: what it looks like when nobody wrote to it for a while. */
function settle(root: string): void {
  const past = (Date.now() - HOUR) / 1000;
  utimesSync(join(root, '_compact'), past, past);
}

const filesOf = (state: DatasetState) => [...state.files.keys()].sort();
const commitName = (n: number) => `${String(n).padStart(20, '0')}.json`;

describe('a dataset state read again only when the log may have changed', () => {
  it('returns the state it read while nothing was committed since', async () => {
    const root = await dataset(3);
    settle(root);
    const states = new DatasetStateMemo();
    const first = states.read(root, later());
    expect(filesOf(first)).toHaveLength(3);
    expect(states.read(root, later())).toBe(first);
    expect(states.read(root, later())).toBe(first);
  });

  it('reads the log again after a commit of this process, and after a checkpoint that prunes it', async () => {
    const root = await dataset(2);
    settle(root);
    const states = new DatasetStateMemo();
    const first = states.read(root, later());
    await commit(root, 2);
    const second = states.read(root, later());
    expect(filesOf(second)).toEqual([...filesOf(first), 'date=2026-11-21/part-2.parquet'].sort());
    // 32 commits since the last checkpoint: one is written and the commits it holds removed.
    for (let i = 3; i < 40; i++) await commit(root, i);
    await checkpointIfDue(readDatasetStateStable(root));
    expect(readdirSync(join(root, '_compact')).some((n) => n.endsWith('.checkpoint.json'))).toBe(true);
    settle(root);
    expect(filesOf(states.read(root, later()))).toEqual(filesOf(readDatasetStateStable(root)));
    expect(filesOf(states.read(root, later()))).toHaveLength(40);
  });

  it("reads this process's commit even where the folder's stats never change (a file system that does not update them) and NEWEST was not rewritten (a full disk)", async () => {
    const root = await dataset(2);
    const frozen = statSync(join(root, '_compact'));
    const aged: Stats = Object.assign(Object.create(Object.getPrototypeOf(frozen) as object) as Stats, frozen, { mtimeMs: frozen.mtimeMs - HOUR, ctimeMs: frozen.ctimeMs - HOUR });
    const states = new DatasetStateMemo(() => aged);
    const first = states.read(root, later());
    expect(states.read(root, later())).toBe(first);
    const writes = logWritesOf(root);
    await commit(root, 2);
    expect(logWritesOf(root)).toBeGreaterThan(writes);
    // appendCommit goes on when NEWEST cannot be written: it still names the commit before.
    writeFileSync(join(root, '_compact', 'NEWEST'), '2\n');
    expect(filesOf(states.read(root, later()))).toHaveLength(3);
  });

  it("reads another process's commit: a new file in the log folder, no write of this process", async () => {
    // The other process's dataset: the same two commits, then a third.
    const root = await dataset(2);
    const other = await dataset(3);
    settle(root);
    const states = new DatasetStateMemo();
    const first = states.read(root, later());
    expect(states.read(root, later())).toBe(first);
    const writes = logWritesOf(root);
    // Its commit, as its rename leaves it (before its NEWEST is rewritten), then NEWEST.
    copyFileSync(join(other, '_compact', commitName(3)), join(root, '_compact', commitName(3)));
    expect(logWritesOf(root)).toBe(writes);
    const second = states.read(root, later());
    expect(filesOf(second)).toEqual(filesOf(readDatasetStateStable(other)));
    settle(root);
    copyFileSync(join(other, '_compact', 'NEWEST'), join(root, '_compact', 'NEWEST'));
    expect(filesOf(states.read(root, later()))).toEqual(filesOf(second));
  });

  it('reads the log again after a commit deleted (the loss is named)', async () => {
    const root = await dataset(3);
    settle(root);
    const states = new DatasetStateMemo();
    expect(states.read(root, later()).damage).toEqual([]);
    rmSync(join(root, '_compact', commitName(3)));
    const state = states.read(root, later());
    expect(filesOf(state)).toHaveLength(2);
    expect(state.damage).toEqual([{ path: join(root, '_compact', commitName(3)), message: expect.stringMatching(/commit 3 is missing/) }]);
  });

  it('never keeps a damaged state, nor one read while the folder had just changed', async () => {
    const root = await dataset(3);
    const path = join(root, '_compact', commitName(2));
    writeFileSync(path, readFileSync(path, 'utf8').replace('"rows":1', '"rows":2'));
    settle(root);
    const states = new DatasetStateMemo();
    const damaged = states.read(root, later());
    expect(damaged.damage).toHaveLength(1);
    expect(states.read(root, later())).not.toBe(damaged);
    // Changed a moment before the read (within two seconds): two writes of one timestamp tick look alike.
    const fresh = await dataset(2);
    const justNow = statSync(join(fresh, '_compact')).mtimeMs + 1;
    const read = states.read(fresh, justNow);
    expect(states.read(fresh, justNow)).not.toBe(read);
    expect(states.read(fresh, justNow)).toEqual(read);
  });
});
