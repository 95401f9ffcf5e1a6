/**
 * Preloaded into a real `log-endpoints serve` process (`node --import tsx --import <this>`): every
 * DuckDB prepared-statement run waits until the process gets SIGUSR2, so a test has a query "in
 * flight" for as long as it wants, with no timing involved. It prints `held` on stderr when a run
 * starts waiting. Like DuckDB itself, an interrupt of a connection ends the held run with an
 * interrupt error (that is how a closing engine stops its queries).
 */
import { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';

const held = new Set<{ release: () => void; interrupt: () => void }>();
let open = false;

process.on('SIGUSR2', () => {
  open = true;
  for (const run of held) run.release();
});

const prototype = DuckDBPreparedStatement.prototype as unknown as Record<string, unknown>;
for (const name of Object.getOwnPropertyNames(prototype)) {
  // Descriptors, not values: reading a getter on the prototype itself would throw.
  const original = Object.getOwnPropertyDescriptor(prototype, name)?.value;
  if (typeof original !== 'function' || !/^(run|stream)/.test(name)) continue;
  prototype[name] = async function (this: unknown, ...args: unknown[]) {
    if (!open) {
      await new Promise<void>((resolve, reject) => {
        const run = {
          release: () => (held.delete(run), resolve()),
          interrupt: () => (held.delete(run), reject(new Error('INTERRUPT Error: Interrupted!'))),
        };
        held.add(run);
        process.stderr.write('held\n');
      });
    }
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  };
}

const interrupt = DuckDBConnection.prototype.interrupt;
DuckDBConnection.prototype.interrupt = function (this: DuckDBConnection) {
  for (const run of held) run.interrupt();
  return interrupt.call(this);
};
