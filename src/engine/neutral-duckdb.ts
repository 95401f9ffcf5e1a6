import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/**
 * A small DuckDB of the engines' own (one thread, no extensions, nothing read), for the checks
 * whose verdict must not depend on the engine that runs the query: RE2 patterns (`re2-pattern.ts`),
 * callers' SQL, whose DuckDB parse tree the sandbox checks whatever engine runs it, and the
 * definitions' DuckDB SQL prepared at start (`src/query/sql-parser.ts`). Checks run one at a time.
 */
let database: Promise<DuckDBConnection> | null = null;
let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `work` on the neutral DuckDB's connection, after the checks before it.
 *
 * @example
 * await onNeutralDuckDB((c) => c.run('SELECT 1'));
 */
export function onNeutralDuckDB<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
  const next = queue.then(async () => work(await open()));
  queue = next.catch(() => undefined);
  return next;
}

function open(): Promise<DuckDBConnection> {
  database ??= DuckDBInstance.create(':memory:', {
    threads: '1',
    memory_limit: '64MB',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  }).then((instance) => instance.connect());
  // A failed start is tried again by the next check rather than remembered.
  database.catch(() => (database = null));
  return database;
}
