import { AsyncLocalStorage } from 'node:async_hooks';
import { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { SourceInputs } from '../src/engine/duckdb/source-inputs';
import { SourceReader } from '../src/files/source-reader';
import { CallerSqlCheck } from '../src/query/check-caller-sql';
import { neutralSqlParser } from '../src/query/sql-parser';
import { round } from './stats';

/**
 * Where the library's time goes in one Studio request, stage by stage. The bench wraps the methods
 * each stage runs in (nothing in the library changes: a process that never installs the meter pays
 * nothing), and counts a call only inside the request being measured (an async context), so the
 * compactor's and a writer's DuckDB work beside it is not counted. A call made inside another
 * counted call is counted there (the DuckDB work of listing a source's files is the listing's),
 * except DuckDB's parse inside the check, which is its own stage:
 *
 * - `translate`: the check's start to DuckDB's first parse of the text (CallerSqlCheck.check):
 *   Studio's BigQuery SQL parsed (sqlparser-rs; its WebAssembly loaded by the process's first
 *   translation), translated and printed as DuckDB SQL, and the sandbox's wrapping of that text
 *   (a few string operations);
 * - `check`: the rest of CallerSqlCheck.check, `parse` left out: the sandbox's rules judged on the
 *   parse trees, the sources the text names (once per text);
 * - `parse`: DuckDB's parse of the translated text the rules read (json_serialize_sql);
 * - `prepare`: preparing the DuckDB statement (once per text and connection);
 * - `snapshot`: the sources' snapshot (SourceReader: their files listed, the commits read, the
 *   files' bytes checked) and the files made ready for DuckDB (SourceInputs.sourceFiles);
 * - `bind`: binding the request's values to the statement (DuckDBPreparedStatement.bind);
 * - `run`: DuckDB running it and reading the result;
 * - `shape`: from the end of DuckDB's run to the answer: the result's values read into rows
 *   (the engine's values, then Logflare's wire format), the connection given back;
 * - `other`: what none of these covers: the request's parameters and plan, the memo of checked
 *   texts, the query gate and the connection, the statement's full text, the kept statements' lookup.
 */
export interface Stages {
  total_ms: number;
  translate_ms: number;
  check_ms: number;
  parse_ms: number;
  prepare_ms: number;
  snapshot_ms: number;
  bind_ms: number;
  run_ms: number;
  shape_ms: number;
  other_ms: number;
}

/** The stages in the order a request goes through them (the tables' columns). */
export const STAGES = ['translate', 'check', 'parse', 'prepare', 'snapshot', 'bind', 'run', 'shape', 'other'] as const;

type Counted = 'check' | 'parse' | 'prepare' | 'snapshot' | 'bind' | 'run';

/** One counted call in progress: the time of its counted calls inside it, and when the first began. */
interface Frame {
  stage: Counted;
  innerMs: number;
  firstInnerAt: bigint | null;
}

interface Spent {
  ms: Record<Counted, number>;
  translate: number;
  /** When the last DuckDB run of the request ended (shaping starts there). */
  lastRunEnd: bigint | null;
}

/** Measures requests stage by stage while installed; `uninstall` puts every wrapped method back. */
export interface StageMeter {
  measure(work: () => Promise<unknown>): Promise<Stages>;
  uninstall(): void;
}

const since = (start: bigint, end: bigint = process.hrtime.bigint()) => Number(end - start) / 1e6;

export function installStageMeter(): StageMeter {
  const current = new AsyncLocalStorage<Spent>();
  const frames = new AsyncLocalStorage<Frame>();
  const undo: Array<() => void> = [];
  const wrap = (owner: object, name: string, stage: Counted) => {
    const target = owner as Record<string, unknown>;
    const original = target[name] as (...args: unknown[]) => unknown;
    if (typeof original !== 'function') throw new Error(`bench/studio-stages.ts: ${name} is not a method to wrap`);
    target[name] = function (this: unknown, ...args: unknown[]) {
      const spent = current.getStore();
      const outer = frames.getStore();
      // Outside the request, or inside another counted call (counted there): as it is.
      if (!spent || (outer && !(outer.stage === 'check' && stage === 'parse'))) return original.apply(this, args);
      const start = process.hrtime.bigint();
      if (outer && outer.firstInnerAt === null) outer.firstInnerAt = start;
      const frame: Frame = { stage, innerMs: 0, firstInnerAt: null };
      const done = () => {
        const end = process.hrtime.bigint();
        const elapsed = since(start, end);
        spent.ms[stage] += elapsed - frame.innerMs;
        if (outer) outer.innerMs += elapsed;
        if (stage === 'check') {
          // Translating comes before the first parse (sandboxed-check.ts), or is the whole check if it failed before one.
          const translate = since(start, frame.firstInnerAt ?? end);
          spent.translate += translate;
          spent.ms.check -= translate;
        }
        if (stage === 'run') spent.lastRunEnd = end;
      };
      // bind is synchronous and stays so: a wrapper that returned a promise would turn its throw into a rejection nobody awaits.
      let result: unknown;
      try {
        result = frames.run(frame, () => original.apply(this, args));
      } catch (error) {
        done();
        throw error;
      }
      if (result instanceof Promise) return result.finally(done);
      done();
      return result;
    };
    undo.push(() => (target[name] = original));
  };
  wrap(CallerSqlCheck.prototype, 'check', 'check');
  wrap(neutralSqlParser, 'serialize', 'parse');
  wrap(DuckDBConnection.prototype, 'prepare', 'prepare');
  wrap(SourceReader.prototype, 'snapshot', 'snapshot');
  wrap(SourceReader.prototype, 'verifyCompanions', 'snapshot');
  wrap(SourceReader.prototype, 'verifyRows', 'snapshot');
  wrap(SourceInputs.prototype, 'sourceFiles', 'snapshot');
  wrap(DuckDBPreparedStatement.prototype, 'bind', 'bind');
  wrap(DuckDBPreparedStatement.prototype, 'runAndReadAll', 'run');
  return {
    async measure(work) {
      const spent: Spent = { ms: { check: 0, parse: 0, prepare: 0, snapshot: 0, bind: 0, run: 0 }, translate: 0, lastRunEnd: null };
      const start = process.hrtime.bigint();
      await current.run(spent, work);
      const end = process.hrtime.bigint();
      const total = since(start, end);
      const shape = spent.lastRunEnd === null ? 0 : since(spent.lastRunEnd, end);
      const counted = spent.translate + Object.values(spent.ms).reduce((a, b) => a + b, 0) + shape;
      return {
        total_ms: round(total),
        translate_ms: round(spent.translate),
        check_ms: round(spent.ms.check),
        parse_ms: round(spent.ms.parse),
        prepare_ms: round(spent.ms.prepare),
        snapshot_ms: round(spent.ms.snapshot),
        bind_ms: round(spent.ms.bind),
        run_ms: round(spent.ms.run),
        shape_ms: round(shape),
        other_ms: round(total - counted),
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
  const keys = ['total_ms', ...STAGES.map((s) => `${s}_ms` as const)] as const;
  return Object.fromEntries(keys.map((k) => [k, median(k)])) as unknown as Stages;
}
