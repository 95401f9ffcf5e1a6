import { AsyncLocalStorage } from 'node:async_hooks';
import { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { neutralSqlParser } from '../src/query/sql-parser';
import { round } from './stats';

/**
 * Where the library's time goes in one Studio request, stage by stage. The bench wraps the methods
 * each stage runs in (nothing in the library changes: a process that never installs the meter pays
 * nothing), and counts a call only inside the request being measured (an async context), so the
 * compactor's and a writer's DuckDB work beside it is not counted:
 *
 * - `translate_check`: translating Studio's BigQuery SQL (its parse included) and checking the
 *   DuckDB text by the sandbox's rules, `parse` left out (CallerSqlCheck.check, once per text);
 * - `parse`: DuckDB's parse of the translated text the rules read (json_serialize_sql);
 * - `prepare`: preparing the DuckDB statement (once per text and connection);
 * - `run`: DuckDB running it and reading the result;
 * - `rest`: everything else of the request: the source's snapshot and file lists, binding the
 *   values, shaping the rows into Logflare's wire format.
 */
export interface Stages {
  total_ms: number;
  translate_check_ms: number;
  parse_ms: number;
  prepare_ms: number;
  run_ms: number;
  rest_ms: number;
}

type Counted = 'check' | 'parse' | 'prepare' | 'run';

/** Measures requests stage by stage while installed; `uninstall` puts every wrapped method back. */
export interface StageMeter {
  measure(work: () => Promise<unknown>): Promise<Stages>;
  uninstall(): void;
}

export function installStageMeter(): StageMeter {
  const current = new AsyncLocalStorage<Record<Counted, number>>();
  const undo: Array<() => void> = [];
  const wrap = (owner: object, name: string, stage: Counted) => {
    const target = owner as Record<string, unknown>;
    const original = target[name] as (...args: unknown[]) => Promise<unknown>;
    target[name] = async function (this: unknown, ...args: unknown[]) {
      const spent = current.getStore();
      if (!spent) return original.apply(this, args);
      const start = process.hrtime.bigint();
      try {
        return await original.apply(this, args);
      } finally {
        spent[stage] += Number(process.hrtime.bigint() - start) / 1e6;
      }
    };
    undo.push(() => (target[name] = original));
  };
  wrap(CallerSqlCheck.prototype, 'check', 'check');
  wrap(neutralSqlParser, 'serialize', 'parse');
  wrap(DuckDBConnection.prototype, 'prepare', 'prepare');
  wrap(DuckDBPreparedStatement.prototype, 'runAndReadAll', 'run');
  return {
    async measure(work) {
      const spent = { check: 0, parse: 0, prepare: 0, run: 0 };
      const start = process.hrtime.bigint();
      await current.run(spent, work);
      const total = Number(process.hrtime.bigint() - start) / 1e6;
      return {
        total_ms: round(total),
        translate_check_ms: round(spent.check - spent.parse),
        parse_ms: round(spent.parse),
        prepare_ms: round(spent.prepare),
        run_ms: round(spent.run),
        rest_ms: round(total - spent.check - spent.prepare - spent.run),
      };
    },
    uninstall: () =>
      undo
        .splice(0)
        .reverse()
        .forEach((u) => u()),
  };
}

/** The median of each stage over several measurements (each stage on its own). */
export function medianStages(samples: readonly Stages[]): Stages {
  const median = (key: keyof Stages) => {
    const sorted = samples.map((s) => s[key]).sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
  };
  return {
    total_ms: median('total_ms'),
    translate_check_ms: median('translate_check_ms'),
    parse_ms: median('parse_ms'),
    prepare_ms: median('prepare_ms'),
    run_ms: median('run_ms'),
    rest_ms: median('rest_ms'),
  };
}
