import { join } from 'node:path';
import { DATASET_LOG_DIR, ensureDataset } from './dataset-log';
import { acquireLock, describeHolder, LockedError } from '../util/lock-file';
import { dataDirAround, LOCK_FILE } from './data-dir-lock';
import { EngineError } from '../errors';

/**
 * Runs `work` holding the dataset's lock (`_compact/LOCK`, the one lock protocol of
 * lock-file.ts): one writer at a time per dataset, whether `compact` from cron or managed
 * storage's background compactor. A lock whose holder died is taken over; one held by a live
 * process, on this host or another, is refused with a clear error.
 */
export async function withDatasetLock<T>(root: string, purpose: string, work: () => Promise<T>): Promise<T> {
  await ensureDataset(root);
  // Inside a data dir every writer holds its lock first: one this process holds makes a dataset
  // lock left by a killed run stale at once, not after the lease (10 s without a socket probe).
  // Any source's name: the lock only counts when this process holds it, so a guess costs nothing.
  const dataDir = dataDirAround(root, { has: () => true });
  const enclosedBy = dataDir === null ? undefined : join(dataDir, LOCK_FILE);
  const lock = await acquireLock(join(root, DATASET_LOG_DIR, 'LOCK'), purpose, {}, { enclosedBy }).catch((error: unknown) => {
    if (error instanceof LockedError) {
      throw new EngineError('overloaded', `Another compaction is running on ${root}: ${describeHolder(error.record, error.here)}. Try again when it is done.`, { cause: error });
    }
    throw error;
  });
  try {
    return await work();
  } finally {
    await lock.release();
  }
}
