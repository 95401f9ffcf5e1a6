import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync, statSync } from 'node:fs';
import { EngineError } from '../../errors';
import type { SkipReason } from '../../files/file-checks';
import type { ListedFile } from '../../files/list-glob';
import { companionsOf, type FileRange, type ReadSet, type SourceReader } from '../../files/source-reader';
import { sqlStringList } from '../../duckdb/sql-literal';
import type { SourceInputs } from './source-inputs';

// The judgement of a read that failed: whether its files changed or one is damaged (then it is
// listed again, the damaged file left out and named), or the failure is the engine's to report.

export { MAX_ATTEMPTS } from '../../files/source-reader';

/** The error of a query whose files kept changing for `MAX_ATTEMPTS` reads. */
export function keptChanging(cause: unknown): EngineError {
  return new EngineError('overloaded', 'The log files kept changing while they were read; retry shortly.', { cause, retryAfterSeconds: 1 });
}

/** What a failed read of one source is judged with. */
export interface FailedRead {
  connection: DuckDBConnection;
  /** The source's reader: damaged files are marked on it. */
  reader: SourceReader;
  read: ReadSet;
  /** The copies the read's SQL named (copy path -> the range it holds). */
  copies: Map<string, FileRange> | undefined;
  inputs: SourceInputs;
  /** Whether the engine is closed (then nothing is retried). */
  closed: boolean;
}

/**
 * Whether a failed read deserves a fresh listing: a file vanished or changed since it was listed
 * (rotation, a compaction moving it), or the engine named a file it cannot read, which is then
 * kept out of answers (and told) until it changes.
 *
 * @example
 * if (!(await retryable(error, { connection, reader, read, copies, inputs, closed: false }))) throw error;
 */
export async function retryable(error: unknown, { connection, reader, read, copies, inputs, closed }: FailedRead): Promise<boolean> {
  if (error instanceof EngineError || closed) return false;
  const message = String((error as Error)?.message ?? error);
  if (/interrupt|out of memory/i.test(message)) return false;
  // A shortage of the process, not a fault of the file: never a reason to leave a file out.
  if (/too many open files|resource temporarily unavailable|cannot allocate memory/i.test(message)) return false;
  const listed: ListedFile[] = [...read.ndjson, ...read.ranges.map((r) => r.file), ...read.parquet];
  if (listed.some(changedSinceListed)) return true;
  if ((error as NodeJS.ErrnoException)?.code === 'ENOENT') return true;
  let marked = false;
  for (const [copy, range] of copies ?? []) {
    if (message.includes(copy)) listed.push(range.file);
  }
  // A line too long for the reader costs that line only: the file is read again without it.
  if (/"maximum_object_size" of \d+ bytes exceeded/.test(message)) {
    const named = listed.filter((f) => f.kind === 'ndjson' && !inputs.isLongLined(f) && (message.includes(f.path) || [...(copies ?? [])].some(([copy, r]) => r.file === f && message.includes(copy))));
    for (const file of named) inputs.markLongLined(file);
    if (named.length) return true;
  }
  for (const file of listed) {
    // A head or stored rollup the engine cannot read is left aside: its data file is read instead (not a skip).
    const companion = companionsOf(file).find((c) => message.includes(c.path));
    if (companion) {
      reader.markDamaged(companion, 'unreadable_by_engine', engineDetail(message, companion.path));
      marked = true;
      continue;
    }
    if (!message.includes(file.path) && ![...(copies ?? [])].some(([copy, r]) => r.file === file && message.includes(copy))) continue;
    reader.markDamaged(file, damageReason(file, message), engineDetail(message, file.path));
    marked = true;
  }
  if (!marked && UNNAMED_DAMAGE.test(message)) marked = await findDamaged(connection, reader, read.parquet, message);
  return marked;
}

/**
 * The engine failed on damaged Parquet without naming the file (a garbled page header): each
 * Parquet file of the read (and head) is decoded whole, alone, and those that fail are kept out
 * like a named one. Only after such a failure, and once per file version (the marks stay).
 */
async function findDamaged(connection: DuckDBConnection, reader: SourceReader, parquet: readonly ListedFile[], message: string): Promise<boolean> {
  let found = false;
  for (const file of parquet) {
    const companions = companionsOf(file);
    for (const candidate of [file, ...companions]) {
      try {
        await connection.run(`SELECT min(hash(COLUMNS(*))) FROM read_parquet(${sqlStringList([candidate.path])})`);
      } catch (error) {
        const detail = String((error as Error)?.message ?? error);
        if (/interrupt/i.test(detail)) throw error;
        reader.markDamaged(candidate, candidate !== file ? 'unreadable_by_engine' : damageReason(candidate, detail), engineDetail(detail || message, candidate.path));
        found = true;
      }
    }
  }
  return found;
}

/** Whether a listed file is gone or is not the version that was listed any more. */
function changedSinceListed(file: ListedFile): boolean {
  if (file.dataset) return !existsSync(file.path);
  const now = statSync(file.path, { throwIfNoEntry: false });
  return !now || now.ino !== file.ino || now.size !== file.size || now.mtimeMs !== file.mtimeMs;
}

/** Engine messages of damaged Parquet that name no file: the files are then tried one by one. */
const UNNAMED_DAMAGE = /TProtocolException|Invalid Error|corrupt|decompress|thrift|snappy|zstd|magic bytes/i;

/** The stable reason code of a file the engine could not read, from its message. */
function damageReason(file: ListedFile, message: string): SkipReason {
  if (file.kind === 'parquet') return /magic|too small|not a parquet|footer|thrift|parquet/i.test(message) ? 'not_parquet' : 'unreadable_by_engine';
  return /gzip|zstd|frame|compress/i.test(message) ? 'broken_compression' : 'unreadable_by_engine';
}

/** The engine's one-line message about a file, without the path (answers never hold paths). */
function engineDetail(message: string, path: string): string {
  return message
    .split('\n')[0]!
    .replaceAll(path, 'the file')
    .replace(/^[A-Za-z ]*Error: /, '')
    .trim();
}
