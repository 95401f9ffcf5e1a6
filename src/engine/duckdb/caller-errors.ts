import { InvalidSqlError } from '../../errors';
import { withoutPaths } from '../../sandbox/without-paths';
import type { ReadSet } from '../../files/source-reader';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import type { ReadFiles } from './source-inputs';

/** DuckDB's kinds of error a caller's SQL causes: a column that is not there, a cast that fails, ... */
const CALLER_KINDS = /^(Binder|Parser|Catalog|Conversion|Out of Range|Not implemented|Invalid Input|Invalid type) Error: ?/;

/**
 * The `400 invalid_sql` (rule `query`) for a DuckDB error a caller's SQL caused, or null when the
 * error is of another kind (out of memory, interrupted, I/O: the engine's business). The message
 * is DuckDB's first line, with `paths` (the log files of the query) and anything else that looks
 * like an absolute path taken out: later lines quote the SQL that ran, the endpoint's included.
 *
 * @example
 * callerSqlError(new Error('Binder Error: Referenced column "x" not found'), []); // InvalidSqlError, rule 'query'
 */
export function callerSqlError(error: unknown, paths: readonly string[]): InvalidSqlError | null {
  const message = String((error as Error)?.message ?? '');
  const kind = CALLER_KINDS.exec(message);
  if (!kind) return null;
  let line = withoutPaths(message.slice(kind[0].length).split('\n')[0]!.trim(), paths);
  if (line.length > 300) line = `${line.slice(0, 300)}…`;
  return new InvalidSqlError('query', `The query failed (${kind[1]!.toLowerCase()} error): ${line}`, { cause: error });
}

/** Whether an engine error names one of the query's files (then it may be the file's fault). */
export function namesAFile(error: unknown, paths: readonly string[]): boolean {
  const message = String((error as Error)?.message ?? '');
  return paths.some((path) => message.includes(path));
}

/**
 * Throws the caller's `400 invalid_sql` when a failed caller's SELECT is the caller's fault: an
 * error of the kinds SQL causes (a missing column, a failed cast). One that names a log file may
 * be the file's: it is the caller's only if the statement's own query (`runOwn`) reads the same
 * files fine. Otherwise returns, and the error takes the engine's usual way (a damaged file left out, ...).
 *
 * @example
 * if (query.caller !== undefined) await blameCaller(error, reads, files, () => execute(connection, statement, query, files));
 */
export async function blameCaller(error: unknown, reads: ReadonlyMap<SourceDescriptor, ReadSet>, files: ReadonlyMap<SourceDescriptor, ReadFiles>, runOwn: () => Promise<unknown>): Promise<void> {
  const paths = [...reads].flatMap(([source, read]) => [
    ...read.ndjson.map((f) => f.path),
    ...read.ranges.map((r) => r.file.path),
    ...read.parquet.map((f) => f.path),
    ...(files.get(source)?.copies.keys() ?? []),
  ]);
  const refusal = callerSqlError(error, paths);
  if (refusal === null) return;
  if (namesAFile(error, paths)) {
    try {
      await runOwn();
    } catch {
      return;
    }
  }
  throw refusal;
}
