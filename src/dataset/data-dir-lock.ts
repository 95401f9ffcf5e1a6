import { join, resolve, sep } from 'node:path';
import { LogEndpointsError } from '../errors';
import type { SourceSet } from '../sources/source-set';
import { acquireLock, describeHolder, LockedError, type HeldLock, type LockRecord, type LockTiming } from '../util/lock-file';

/** The lock file's name in a data dir. */
export const LOCK_FILE = 'log-endpoints.lock';

/** Held by the one process that writes a data dir (see lock-file.ts for the protocol). */
export type DataDirLock = HeldLock;

/**
 * The data dir is used by another live process (a running `serve --data-dir`, an `ingest`, a
 * `check --repair`), on this host or another: two writers would interleave segments and
 * compactions. `holder` says who, as its lock file tells; `cause` is the lock's own refusal.
 * Code `data_dir_locked`, status 503: thrown when managed storage starts (`createEndpoints({ storage })`),
 * never by a query; it lasts until that process stops.
 *
 * @example
 * try { await createEndpoints({ storage: { dataDir: './data' } }) }
 * catch (e) { if (e instanceof DataDirLockedError) console.log(e.code, e.holder?.pid) } // 'data_dir_locked', 4242
 */
export class DataDirLockedError extends LogEndpointsError {
  constructor(
    readonly dataDir: string,
    readonly holder: LockRecord | null,
    here = false,
    options?: { cause?: unknown },
  ) {
    super(
      'data_dir_locked',
      503,
      `The data dir ${dataDir} is in use by ${here ? 'this process' : holder ? `process ${holder.pid} on host ${holder.host} (${holder.purpose}, since ${holder.since})` : describeHolder(null)}. ` +
        'Stop it first, or send events to it over HTTP. A lock whose holder died is taken over by itself ' +
        '(at once on the same machine, after 10 s from another one).',
      options,
    );
  }
}

/**
 * Takes the data dir's lock (`<dataDir>/log-endpoints.lock`) for `purpose` (`serve`, `ingest`,
 * `compact`, `check --repair`), refusing with `DataDirLockedError` while another process holds it.
 *
 * @example
 * const lock = await lockDataDir('./data', 'ingest');
 * try { await load() } finally { await lock.release() }
 */
export async function lockDataDir(dataDir: string, purpose = 'serve', timing?: LockTiming): Promise<DataDirLock> {
  try {
    return await acquireLock(join(dataDir, LOCK_FILE), purpose, timing);
  } catch (error) {
    if (error instanceof LockedError) throw new DataDirLockedError(dataDir, error.record, error.here, { cause: error });
    throw error;
  }
}

/**
 * The managed data dir a path lies in (`<dataDir>/<source>/wal/...` or `.../parquet/...`, for a
 * source of `sources`), or null: `compact` run by hand on such a path takes the data dir's lock,
 * so it never races the process that writes there.
 *
 * @example
 * dataDirAround('/srv/data/edgeLogs/wal/00000000000000000003.ndjson', BUILT_IN_SOURCE_SET); // '/srv/data'
 */
export function dataDirAround(path: string, sources: Pick<SourceSet, 'has'>): string | null {
  const parts = resolve(path).split(sep);
  for (let i = parts.length - 2; i >= 1; i--) {
    if (sources.has(parts[i]!) && (parts[i + 1] === 'wal' || parts[i + 1] === 'parquet')) {
      return parts.slice(0, i).join(sep) || sep;
    }
  }
  return null;
}
