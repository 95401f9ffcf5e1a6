import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { sqlString } from '../duckdb/sql-literal';
import { storedTypedOf, withTypedColumns } from '../duckdb/typed-columns';
import { ARRAYS_COLUMN, declaredSourceOf, typedFieldsOf } from '../sources/typed-fields';
import { isTypedCounts } from '../sources/typed-hourly';
import { DurablePlacement } from './durable-placement';
import { codeOnly } from '../sql/sql-scan';
import type { DataFile } from './dataset-log';
import { hasHeads, headPathOf, writeHead } from './newest-heads';
import { systemMs } from '../time/clock';
import { failpoint } from '../util/failpoint';

/** The folder of a dataset that holds the stored rollups, beside its `date=` folders. */
export const ROLLUPS_DIR = '_rollups';

/**
 * Rows per row group of a stored rollup. Sorted by project (or origin) first, a project's rows of
 * a file sit in a few groups, and a query skips the others by their statistics; but each group
 * skipped still costs DuckDB about 5 µs, and a gateway day's URL rollup held 174 groups of 2,048:
 * a week's daily usage spent more skipping groups than reading its own. 8,192 halved the daily
 * usage statements and moved the quantile cases within their spread (docs/performance.md,
 * "Stored rollups in row groups of 8,192").
 */
const ROLLUP_ROW_GROUP = 8192;

/**
 * Where a data file's stored rollup lives: `<root>/_rollups/<rollup>/date=<day>/<name>`, out of the
 * data folders (a plain glob of the data files never reads it). Works on absolute paths and on
 * paths relative to the dataset.
 *
 * @example
 * rollupPathOf('date=2026-11-21/part-00-0.parquet', 'function_edge_logs_hourly')
 * // '_rollups/function_edge_logs_hourly/date=2026-11-21/part-00-0.parquet'
 */
export function rollupPathOf(dataPath: string, rollup: string): string {
  const day = dirname(dataPath);
  return join(dirname(day), ROLLUPS_DIR, rollup, basename(day), basename(dataPath));
}

/**
 * The data file (relative, '/'-separated) and rollup a stored rollup belongs to, from its relative
 * path, or null when the path is not a stored rollup's.
 *
 * @example
 * dataPathOfRollup('_rollups/edge_logs_url_hourly/date=2026-11-21/part-00-0.parquet')
 * // { data: 'date=2026-11-21/part-00-0.parquet', rollup: 'edge_logs_url_hourly' }
 */
export function dataPathOfRollup(path: string): { data: string; rollup: string } | null {
  const parts = path.split(/[\\/]/);
  return parts.length === 4 && parts[0] === ROLLUPS_DIR ? { data: `${parts[2]}/${parts[3]}`, rollup: parts[1]! } : null;
}

/** The rollups a source declares that a data file's entry does not record, or records by another definition. */
export function missingRollups(source: SourceDescriptor, file: DataFile): string[] {
  return Object.keys(source.rollups).filter((name) => file.rollups?.[name]?.definition !== rollupDefinition(source, name));
}

/** Hashes by descriptor (sources belong to an instance: two may share a name and differ). */
const definitions = new WeakMap<SourceDescriptor, Map<string, string>>();

/**
 * The hash of what a stored rollup's rows depend on: its SQL (comments and layout aside) and the
 * source's columns that SQL names (name, type, where events hold it). A stored rollup records the
 * hash it was computed by; one of another hash (the SQL or a column changed since, or written
 * before the hash existed) is never read, and compaction computes it again (backfill-rollups.ts).
 *
 * @example
 * rollupDefinition(functionEdgeLogs, 'function_edge_logs_hourly') // '3f9c…' (16 hex digits)
 */
export function rollupDefinition(source: SourceDescriptor, rollup: string): string {
  let known = definitions.get(source);
  if (!known) definitions.set(source, (known = new Map()));
  let hash = known.get(rollup);
  if (hash === undefined) {
    const code = codeOnly(source.rollups[rollup]?.sql ?? '')
      .replace(/\s+/g, ' ')
      .trim();
    const columns = source.columns.filter((c) => new RegExp(`\\b${c.name}\\b`, 'i').test(code)).map((c) => [c.name, c.type, c.path, c.duckdb]);
    hash = createHash('sha256')
      .update(JSON.stringify({ sql: code, columns }))
      .digest('hex')
      .slice(0, 16);
    known.set(rollup, hash);
  }
  return hash;
}

/**
 * Writes a rollup of one data file: the rollup's SQL with the source's relation as that file
 * alone, in the rollup's own order (its SQL's ORDER BY: project or origin first, then the hour),
 * zstd, small row groups. Returns the rows written and, for the typed counts, the fields they
 * leave out (`leftOutOf`).
 */
async function writeRollup(connection: DuckDBConnection, d: SourceDescriptor, rollup: string, dataPath: string, target: string): Promise<{ rows: number; leftOut?: string[] }> {
  // A compacted file holds the source's relation as it is (parquet-layout.ts), but for the typed
  // columns a file written without them lacks (`compact --typed-columns false`): the hour counts of
  // the declared fields and the counts of the declared pairs, which read them, get them computed
  // from `metadata`, as a query would.
  const file = `SELECT * FROM read_parquet(${sqlString(dataPath)})`;
  const declared = declaredSourceOf(d);
  const typed = isTypedCounts(d.relation, rollup);
  const relation = typed ? withTypedColumns(declared, file, storedTypedOf(declared, await storedTypedPaths(connection, declared, dataPath))) : file;
  // NOT MATERIALIZED: a rollup that reads its relation twice (the typed counts: their groups
  // counted, then grouped) reads the file twice instead of DuckDB holding the whole file in memory
  // for the second read (about 100 ms of CPU less a gateway day, and the file's size less memory).
  const reader = await connection.runAndReadAll(`
    COPY (
      WITH ${d.relation} AS NOT MATERIALIZED (${relation})
      ${d.rollups[rollup]!.sql}
    ) TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROLLUP_ROW_GROUP})`);
  const rows = Number(reader.getRows()[0]?.[0] ?? 0);
  if (!typed) return { rows };
  const leftOut = await leftOutOf(connection, target);
  return leftOut.length ? { rows, leftOut } : { rows };
}

/**
 * The fields (or pairs) a typed counts rollup just written leaves out, in order: those of its rows
 * with no timestamp (src/sources/typed-hourly.ts, `boundedCountsSql`). They sort last in the file,
 * in its last row group.
 */
async function leftOutOf(connection: DuckDBConnection, path: string): Promise<string[]> {
  const reader = await connection.runAndReadAll(`SELECT DISTINCT field FROM read_parquet(${sqlString(path)}) WHERE timestamp IS NULL ORDER BY field`);
  return reader.getRows().map((r) => String(r[0]));
}

/** The typed fields a data file holds as columns, by its schema (either both of a field's columns, or neither). */
async function storedTypedPaths(connection: DuckDBConnection, d: SourceDescriptor, dataPath: string): Promise<string[]> {
  const names = new Set((await connection.runAndReadAll(`SELECT name FROM parquet_schema(${sqlString(dataPath)})`)).getRows().map((r) => String(r[0])));
  return names.has(ARRAYS_COLUMN) ? typedFieldsOf(d).flatMap((f) => (names.has(f.text) && names.has(f.json) ? [f.path] : [])) : [];
}

/**
 * A data file's head written already from the rows its write held (sorted-layout-write.ts,
 * `writeSortedLayout`), inside the staging folder: `writeCompanions` places it as it is.
 */
export interface HeldHead {
  path: string;
  rows: number;
}

/**
 * The companions of a data file that is about to be committed: its head (when the source has
 * heads) and its stored rollups (`only`: the ones to write; default all the source declares).
 * The head is the one `only.head` gives when the write took it from the rows it held (the same
 * rows as `writeHead` takes from the file), else it is read from the data file.
 * Each is written inside `staging` (a crash leaves nothing elsewhere), then all are moved to their
 * place in the dataset `root` at once, each fsynced first (durable-placement.ts); the caller records them in the data file's entry of the same commit,
 * so a companion is never named without its file, and an unnamed one is an orphan (dataset-orphans.ts).
 * `rel` is the data file's path relative to `root`; `dataPath` where its bytes are read now.
 * The folders are fsynced by `placement.flush()` before the commit: by the caller when it passes
 * its run's placement (one fsync per folder for the run), else here.
 *
 * @example
 * const companions = await writeCompanions(connection, functionEdgeLogs, staged, root, 'date=2026-11-21/part-1-0.parquet', staging);
 * const entry: DataFile = { path: 'date=2026-11-21/part-1-0.parquet', rows, bytes, day, ...companions };
 */
export async function writeCompanions(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  dataPath: string,
  root: string,
  rel: string,
  staging: string,
  only: { head: boolean | HeldHead; rollups?: readonly string[] } = { head: true },
  placement?: DurablePlacement,
): Promise<Pick<DataFile, 'head' | 'rollups'>> {
  const written: Array<{ rel: string; staged: string; rows: number; rollup?: string; leftOut?: string[] }> = [];
  const stagedOf = async (relTarget: string) => {
    const staged = join(staging, 'companions', relTarget);
    await mkdir(dirname(staged), { recursive: true });
    return staged;
  };
  if (only.head && hasHeads(source)) {
    const relHead = headPathOf(rel).split(sep).join('/');
    if (typeof only.head === 'object') written.push({ rel: relHead, staged: only.head.path, rows: only.head.rows });
    else {
      const staged = await stagedOf(relHead);
      written.push({ rel: relHead, staged, rows: await writeHead(connection, source, dataPath, staged) });
    }
  }
  for (const rollup of only.rollups ?? Object.keys(source.rollups)) {
    const relRollup = rollupPathOf(rel, rollup).split(sep).join('/');
    const staged = await stagedOf(relRollup);
    written.push({ rel: relRollup, staged, ...(await writeRollup(connection, source, rollup, dataPath, staged)), rollup });
    failpoint('rollup:written', source.name);
  }
  const own = placement ?? new DurablePlacement();
  const placed = await own.place(written.map((w) => ({ from: w.staged, to: join(root, w.rel) })));
  if (!placement) await own.flush();
  const out: Pick<DataFile, 'head' | 'rollups'> = {};
  for (const [i, w] of written.entries()) {
    if (w.rollup === undefined) out.head = { path: w.rel, rows: w.rows, ...placed[i]! };
    else
      (out.rollups ??= {})[w.rollup] = {
        path: w.rel,
        rows: w.rows,
        ...placed[i]!,
        writtenMs: systemMs(),
        definition: rollupDefinition(source, w.rollup),
        ...(w.leftOut ? { leftOut: w.leftOut } : {}),
      };
  }
  return out;
}

/** The relative paths of a data file's recorded companions (head and stored rollups). */
export function companionPathsOf(file: DataFile): string[] {
  return [...(file.head ? [file.head.path] : []), ...Object.values(file.rollups ?? {}).map((r) => r.path)];
}
