import type { DuckDBConnection } from '@duckdb/node-api';
import type { SourceDescriptor } from '../sources/source-descriptor';
import { declaredColumns, sourceRelation } from '../duckdb/source-relations';
import { parquetSchema } from '../duckdb/parquet-schema';
import { sqlString, sqlStringList } from '../duckdb/sql-literal';
import { withTypedColumns } from '../duckdb/typed-columns';
import { HEAD_COPY_OPTIONS, HEAD_ROWS_PER_PROJECT, hasHeads } from './newest-heads';
import type { HeldHead } from './stored-rollups';

/** A merge's input: its data file and its head, both where they are read now, and the typed fields its commit records. */
export interface MergedInput {
  data: string;
  head: string | undefined;
  typedFields: readonly string[] | undefined;
}

/**
 * The head of a merged file (`merged`, written from `inputs` by a merge in sorted slices) written
 * from its inputs' heads into `headPath`, instead of from the merged file: a project's newest
 * HEAD_ROWS_PER_PROJECT rows among the files are among each file's own newest, so its heads hold
 * them. The rows are ranked and ordered as `writeHead` ranks and orders them, with the merged
 * file's columns computed as the merge computed them (its declared ones through the source's
 * relation, its typed ones from `metadata`). Why: `writeHead` decodes the merged file twice (its
 * narrow columns to rank, then the kept rows), 0.6 µs of CPU an event of every merge of the ingest
 * bench's gateway events (docs/performance.md, "Compaction's CPU per event"); the heads are a few
 * thousand rows.
 *
 * Resolves null, having written nothing usable, when the heads cannot stand for the files: the
 * source has no heads, an input lacks one (or it cannot be read), a head does not hold
 * HEAD_ROWS_PER_PROJECT rows of each project (or all of them, for a project with fewer) as its
 * file counts them, or a column would not have the merged file's type. The caller then writes
 * the head from the merged file.
 *
 * @example
 * const head = await headFromInputHeads(connection, edgeLogs, inputs, 'staging/merged.parquet', 'staging/merged-head.parquet', true);
 * await writeCompanions(connection, edgeLogs, 'staging/merged.parquet', root, name, staging, { head: head ?? true });
 */
export async function headFromInputHeads(
  connection: DuckDBConnection,
  source: SourceDescriptor,
  inputs: readonly MergedInput[],
  merged: string,
  headPath: string,
  typedColumns: boolean,
): Promise<HeldHead | null> {
  if (!hasHeads(source) || inputs.length === 0 || inputs.some((i) => i.head === undefined)) return null;
  const heads = inputs.map((i) => i.head!);
  const project = source.projectColumn;
  try {
    if (!(await headsComplete(connection, project, inputs))) return null;
    const relation = sourceRelation(source, {
      ndjson: [],
      parquet: heads,
      parquetTypes: await parquetSchema(connection, heads),
      typedFields: new Map(inputs.flatMap((i) => (i.typedFields ? [[i.head!, i.typedFields] as const] : []))),
    });
    const declared = `SELECT ${declaredColumns(source)
      .map(([name]) => name)
      .join(', ')} FROM (${relation})`;
    const kept = `
      SELECT * EXCLUDE (le_rank) FROM (
        SELECT *, row_number() OVER (PARTITION BY ${project} ORDER BY timestamp DESC, id ASC NULLS LAST) AS le_rank FROM (${declared})
      )
      WHERE le_rank <= ${HEAD_ROWS_PER_PROJECT}`;
    const rows = `SELECT * FROM (${typedColumns ? withTypedColumns(source, kept) : kept}) ORDER BY ${project}, timestamp DESC, id`;
    if (!sameColumns(await describe(connection, `SELECT * FROM read_parquet(${sqlString(merged)}, hive_partitioning = false)`), await describe(connection, rows))) return null;
    const reader = await connection.runAndReadAll(`COPY (${rows}) TO ${sqlString(headPath)} (${HEAD_COPY_OPTIONS})`);
    return { path: headPath, rows: Number(reader.getRows()[0]?.[0] ?? 0) };
  } catch {
    // A head missing or unreadable (a damaged dataset): the merged file's own head is written instead.
    return null;
  }
}

/**
 * Whether each input's head holds, for every project of its file, that project's
 * HEAD_ROWS_PER_PROJECT rows, or all of them when it has fewer: what a head is, counted on the
 * narrow project column of the files (a head written by another rule, or not written whole, is not one).
 */
async function headsComplete(connection: DuckDBConnection, project: string, inputs: readonly MergedInput[]): Promise<boolean> {
  const counts = async (files: readonly string[]) => {
    const reader = await connection.runAndReadAll(`SELECT filename, CAST(${project} AS VARCHAR) AS p, count(*) AS n FROM read_parquet(${sqlStringList(files)}, filename = true) GROUP BY ALL`);
    return new Map(reader.getRowObjects().map((r) => [`${String(r.filename)}\u0000${r.p === null ? '\u0001' : String(r.p)}`, Number(r.n)]));
  };
  const data = await counts(inputs.map((i) => i.data));
  const heads = await counts(inputs.map((i) => i.head!));
  const headOf = new Map(inputs.map((i) => [i.data, i.head!]));
  let expected = 0;
  for (const [key, n] of data) {
    const [file, p] = key.split('\u0000') as [string, string];
    expected++;
    if (heads.get(`${headOf.get(file)}\u0000${p}`) !== Math.min(n, HEAD_ROWS_PER_PROJECT)) return false;
  }
  return heads.size === expected;
}

async function describe(connection: DuckDBConnection, sql: string): Promise<string[]> {
  return (await connection.runAndReadAll(`DESCRIBE ${sql}`)).getRows().map((r) => `${String(r[0])} ${String(r[1])}`);
}

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}
