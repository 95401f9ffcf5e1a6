import { readDatasetStateStable } from '../../../src/dataset/dataset-log';
import { datasetDir } from '../../../src/managed/managed-inputs';
import type { SourceDescriptor } from '../../../src/sources/source-descriptor';

/**
 * The two Parquet layouts managed storage compacts into (`storage.typedColumns`, docs/durability.md,
 * "Typed columns"): the suites that replay Studio's and the Explorer's queries run on each, and the
 * answers must be the same.
 */
export const STORAGE_LAYOUTS = [
  { name: 'typed columns', typedColumns: true },
  { name: 'JSON only', typedColumns: false },
] as const;

/** The data files of these sources' datasets (those with typed fields) that record typed columns, and those that do not. */
export function typedFileCounts(dataDir: string, sources: readonly SourceDescriptor[]): { typed: number; plain: number } {
  let typed = 0;
  let plain = 0;
  for (const source of sources.filter((s) => s.typedFields.length)) {
    for (const file of readDatasetStateStable(datasetDir(dataDir, source.name)).files.values()) {
      if (file.typedFields?.length) typed++;
      else plain++;
    }
  }
  return { typed, plain };
}
