import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { openDatabase, type DatabaseSettings } from '../duckdb/open-database';
import { appendCommit, checkpointIfDue, readDatasetStateStable, type DataFile, type DatasetState } from '../dataset/dataset-log';
import { missingRollups, writeCompanions } from '../dataset/stored-rollups';
import { unlinkIfPresent } from '../util/durable-fs';
import { failpoint } from '../util/failpoint';
import { EngineError } from '../errors';

/**
 * Writes the stored rollups that the dataset's files lack (files compacted before the source
 * declared them, or by an earlier version), all in one commit that re-adds each file's entry
 * with them: the upgrade path of a dataset. A file that cannot be read is left as it is (queries
 * compute its rollups from its rows). Runs under the dataset lock; returns the files completed.
 *
 * @example
 * await backfillRollups(state, functionEdgeLogs); // 12: every data file now has its rollups
 */
export async function backfillRollups(state: DatasetState, source: SourceDescriptor, duckdb?: DatabaseSettings): Promise<string[]> {
  const lacking = [...state.files.values()].filter((f) => missingRollups(source, f).length > 0);
  if (lacking.length === 0 || state.damage.length > 0) return [];
  const staging = join(state.root, `.compact-${randomBytes(8).toString('hex')}.tmp`);
  await mkdir(staging, { recursive: true });
  const { connection, close } = await openDatabase(duckdb);
  const add: DataFile[] = [];
  try {
    for (const file of lacking) {
      try {
        const written = await writeCompanions(connection, source, join(state.root, file.path), state.root, file.path, staging, {
          head: false,
          rollups: missingRollups(source, file),
        });
        add.push({ ...file, rollups: { ...file.rollups, ...written.rollups } });
      } catch {
        // Unreadable now (damaged, gone): it keeps no stored rollup, and check reports the file itself.
      }
    }
    if (add.length === 0) return [];
    failpoint('backfill:before-commit', source.name);
    if (!(await appendCommit(state, { source: source.name, add, remove: [], inputs: [] }))) {
      throw new EngineError('storage_failed', `${state.root}: another writer committed to the dataset at the same time; no rollup was added`);
    }
  } catch (error) {
    // Not committed: what was written goes (or is an orphan the next run removes).
    for (const file of add)
      for (const [name, r] of Object.entries(file.rollups ?? {})) {
        if (!state.files.get(file.path)?.rollups?.[name]) await unlinkIfPresent(join(state.root, r.path));
      }
    throw error;
  } finally {
    await close();
    await rm(staging, { recursive: true, force: true });
  }
  failpoint('backfill:after-commit', source.name);
  await checkpointIfDue(readDatasetStateStable(state.root));
  return add.map((f) => f.path);
}
