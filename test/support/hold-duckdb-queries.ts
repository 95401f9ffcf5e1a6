/**
 * Preloaded into a real `log-endpoints serve` process (`node --import tsx --import <this>`): every
 * DuckDB query over the gateway log (SQL naming `edge_logs`, run directly or as a prepared
 * statement) waits until the process gets SIGUSR2, so a test has a query "in flight" for as long
 * as it wants, with no timing involved. It prints `held` on stderr when a query starts waiting.
 * Like DuckDB itself, an interrupt of a connection ends the held query with an interrupt error
 * (that is how a closing engine stops its queries). Set-up, file listing and pings are not held.
 */
import { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';

const held = new Set<{ release: () => void; interrupt: () => void }>();
const sqlOf = new WeakMap<object, string>();
let open = false;

process.on('SIGUSR2', () => {
  open = true;
  for (const run of held) run.release();
});

function hold(): Promise<void> {
  if (open) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const run = {
      release: () => (held.delete(run), resolve()),
      interrupt: () => (held.delete(run), reject(new Error('INTERRUPT Error: Interrupted!'))),
    };
    held.add(run);
    process.stderr.write('held\n');
  });
}

const isEdgeQuery = (sql: unknown) => typeof sql === 'string' && sql.includes('edge_logs');

/** Wraps the run and stream methods of a prototype: `sql` says whether a call is a query to hold. */
function patch(prototype: Record<string, unknown>, sql: (self: object, args: unknown[]) => unknown): void {
  for (const name of Object.getOwnPropertyNames(prototype)) {
    // Descriptors, not values: reading a getter on the prototype itself would throw.
    const original = Object.getOwnPropertyDescriptor(prototype, name)?.value;
    if (typeof original !== 'function' || !/^(run|stream)/.test(name)) continue;
    prototype[name] = async function (this: object, ...args: unknown[]) {
      if (isEdgeQuery(sql(this, args))) await hold();
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    };
  }
}

patch(DuckDBPreparedStatement.prototype as unknown as Record<string, unknown>, (self) => sqlOf.get(self));
patch(DuckDBConnection.prototype as unknown as Record<string, unknown>, (_self, args) => args[0]);

const prepare = DuckDBConnection.prototype.prepare;
DuckDBConnection.prototype.prepare = async function (this: DuckDBConnection, sql: string) {
  const statement = await prepare.call(this, sql);
  sqlOf.set(statement, sql);
  return statement;
};

const interrupt = DuckDBConnection.prototype.interrupt;
DuckDBConnection.prototype.interrupt = function (this: DuckDBConnection) {
  for (const run of held) run.interrupt();
  return interrupt.call(this);
};
