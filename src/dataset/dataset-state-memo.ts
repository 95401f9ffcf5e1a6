import { statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { systemMs } from '../time/clock';
import { DATASET_LOG_DIR, logWritesOf, readDatasetStateStable, readNewest, type DatasetState } from './dataset-log';

/** A state as read, with what its log folder looked like just before the read. */
interface Known {
  folder: Pick<Stats, 'ino' | 'size' | 'mtimeMs' | 'ctimeMs'>;
  writes: number;
  newest: number;
  state: DatasetState;
}

/**
 * Two seconds: a folder changed more recently than this may change again within the same
 * timestamp tick (coarse file systems), so it is never trusted to its stats (as `DirectoryCache`).
 */
const SETTLED_MS = 2000;

/**
 * Each dataset's state as the queries of one reader last read it, read again only when its log may
 * have changed since: a query of a dataset nobody committed to reads its log folder's stats (and
 * `NEWEST`'s, through `readNewest`) instead of listing the log, stating each entry and folding it
 * (0.1 - 0.5 ms a query, the more the commits since the last checkpoint; docs/performance.md,
 * "No fixed cost per request").
 *
 * The log changes only by files created, renamed over or removed in its folder (a commit, `NEWEST`,
 * a checkpoint and its pruning, the lock beside them), each of which changes the folder's
 * modification and change times; by this process, it also counts its writes (`logWritesOf`). So a
 * state is used again while this process wrote nothing to the log, the folder's stats are those
 * taken before that state was read, and the folder had not changed for two seconds then: a
 * commit by this process or another is read by the next query. An entry changed in place (damage:
 * its bytes garbled without a rename) is noticed once the folder changes (the next commit) or by a
 * new reader (a restart, `check`).
 *
 * @example
 * const states = new DatasetStateMemo();
 * states.read('/data/edgeLogs/parquet'); // read and folded
 * states.read('/data/edgeLogs/parquet'); // the same state, nothing committed since
 */
export class DatasetStateMemo {
  readonly #known = new Map<string, Known>();

  constructor(
    /** How the log folder's stats are taken (a test gives a file system whose stats never change). */
    private readonly stat: (path: string) => Stats | undefined = (path) => statSync(path, { throwIfNoEntry: false }),
  ) {}

  /** The dataset's state now: the one read before when its log cannot have changed, else read again. */
  read(root: string, now: number = systemMs()): DatasetState {
    const dir = join(root, DATASET_LOG_DIR);
    // Taken before the read: a commit landing during it changes the folder after these stats.
    const writes = logWritesOf(root);
    const folder = this.stat(dir);
    const newest = folder ? readNewest(dir, now) : 0;
    const known = this.#known.get(root);
    if (known && folder && sameFolder(known.folder, folder) && known.writes === writes && known.newest === newest) return known.state;
    const state = readDatasetStateStable(root);
    // Kept only when the folder had settled before the read (see SETTLED_MS) and nothing says it is damaged.
    if (folder && now - folder.mtimeMs > SETTLED_MS && now - folder.ctimeMs > SETTLED_MS && state.damage.length === 0) {
      if (this.#known.size > 10_000) this.#known.clear();
      this.#known.set(root, { folder: { ino: folder.ino, size: folder.size, mtimeMs: folder.mtimeMs, ctimeMs: folder.ctimeMs }, writes, newest, state });
    } else {
      this.#known.delete(root);
    }
    return state;
  }
}

function sameFolder(a: Known['folder'], b: Stats): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}
