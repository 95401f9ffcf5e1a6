/**
 * The library's own DuckDB statements, caught as a call runs them (the DuckDB client's prepare,
 * bind and run wrapped once, on import), and each run again with DuckDB's detailed profiling: what
 * bench/statement-profile.ts and bench/studio-statement-profile.ts read.
 *
 * @example
 * const statements = await caught(() => ep.query('logs.all', params));
 * const profile = await profiled(statements[0]!, '/tmp/profile.json'); // profile.planner, profile.cpu_time, ...
 */
import { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

/** A statement a call ran: its connection, text and the values it was bound with. */
export interface CaughtStatement {
  statement: DuckDBPreparedStatement;
  connection: DuckDBConnection;
  sql: string;
  values: unknown;
  types: unknown;
}

/** DuckDB's profile of one run (`profiling_mode = 'detailed'`, seconds): its phases and its operator tree. */
export type Profile = Record<string, number> & ProfileNode;

export interface ProfileNode {
  operator_name?: string;
  operator_timing?: number;
  operator_cardinality?: number;
  extra_info?: Record<string, unknown>;
  children?: ProfileNode[];
}

const made = new WeakMap<DuckDBPreparedStatement, { connection: DuckDBConnection; sql: string }>();
const bound = new WeakMap<DuckDBPreparedStatement, { values: unknown; types: unknown }>();
let ran: CaughtStatement[] | null = null;
const prepare = DuckDBConnection.prototype.prepare;
DuckDBConnection.prototype.prepare = async function (this: DuckDBConnection, sql: string) {
  const statement = await prepare.call(this, sql);
  made.set(statement, { connection: this, sql });
  return statement;
};
const bind = DuckDBPreparedStatement.prototype.bind;
DuckDBPreparedStatement.prototype.bind = function (this: DuckDBPreparedStatement, values: never, types?: never) {
  bound.set(this, { values, types });
  return bind.call(this, values, types);
};
const runAndReadAll = DuckDBPreparedStatement.prototype.runAndReadAll;
DuckDBPreparedStatement.prototype.runAndReadAll = async function (this: DuckDBPreparedStatement) {
  ran?.push({ statement: this, ...made.get(this)!, ...bound.get(this)! });
  return runAndReadAll.call(this);
};

/** The statements `call` ran, in order. */
export async function caught(call: () => Promise<unknown>): Promise<CaughtStatement[]> {
  ran = [];
  try {
    await call();
    return ran;
  } finally {
    ran = null;
  }
}

/** One caught statement run again with DuckDB's detailed profiling, its profile written to `file` and read back. */
export async function profiled(r: CaughtStatement, file: string): Promise<Profile> {
  await r.connection.run("SET enable_profiling = 'json'");
  await r.connection.run("SET profiling_mode = 'detailed'");
  await r.connection.run(`SET profiling_output = '${file}'`);
  try {
    bind.call(r.statement, r.values as never, r.types as never);
    await runAndReadAll.call(r.statement);
  } finally {
    await r.connection.run("SET enable_profiling = 'no_output'");
  }
  return JSON.parse(readFileSync(file, 'utf8')) as Profile;
}
