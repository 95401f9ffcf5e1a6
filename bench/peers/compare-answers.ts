import { isDeepStrictEqual } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { sqlString } from '../../src/duckdb/sql-literal';
import type { BenchCase } from '../cases';
import type { Dataset } from '../dataset';
import { planOf } from './clickhouse-expert';
import { dataFilesGlob, type AnswerRow } from './peer';

/** The values each p95 / p99 of a bucket may take: the contract's rank bound, `[v_lo, v_hi]`. */
type Bounds = Map<string, { p95: [number, number]; p99: [number, number] }>;

/**
 * The rank bound of every bucket of an invocation-stats case, from the sorted values themselves
 * (DuckDB over the dataset's data files): with n values, pN lies in `[v_lo, v_hi]`,
 * lo = max(1, floor((q - 0.01) n)), hi = min(n, ceil((q + 0.01) n)) (docs/semantics.md).
 */
async function rankBounds(dataset: Dataset, c: BenchCase): Promise<Bounds> {
  const p = planOf(c);
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    await connection.run("SET TimeZone = 'UTC'");
    // Integer arithmetic for the ranks: (q - 0.01) n = 94 n / 100 exactly.
    const rank = (num: number, round: 'floor' | 'ceil') => (round === 'floor' ? `greatest(1, (${num} * n) // 100)` : `least(n, ((${num} * n) + 99) // 100)`);
    const reader = await connection.runAndReadAll(
      `
      SELECT strftime(bucket, '%Y-%m-%dT%H:%M:%S.%fZ') AS bucket,
             v[${rank(94, 'floor')}] AS p95_lo, v[${rank(96, 'ceil')}] AS p95_hi,
             v[${rank(98, 'floor')}] AS p99_lo, v[${rank(100, 'ceil')}] AS p99_hi
      FROM (
        SELECT bucket, v, len(v) AS n FROM (
          SELECT date_trunc($unit, timestamp) AS bucket, list_sort(list(execution_time_ms) FILTER (WHERE execution_time_ms IS NOT NULL)) AS v
          FROM read_parquet(${sqlString(dataFilesGlob(dataset, 'functions'))})
          WHERE project_ref = $project AND ($function_id IS NULL OR function_id = $function_id)
            AND timestamp >= CAST($first AS TIMESTAMP) AND timestamp < CAST($end AS TIMESTAMP)
          GROUP BY 1
        )
      )`,
      {
        unit: String(p.unit),
        project: String(p.project),
        function_id: p.function_id === null ? null : String(p.function_id),
        first: iso(p.first),
        end: iso(p.end),
      },
    );
    const out: Bounds = new Map();
    for (const r of reader.getRowObjects()) {
      out.set(String(r.bucket), { p95: [Number(r.p95_lo), Number(r.p95_hi)], p99: [Number(r.p99_lo), Number(r.p99_hi)] });
    }
    return out;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function iso(p: unknown): string {
  const micros = (p as { timestamp: bigint }).timestamp;
  return new Date(Number(micros / 1000n)).toISOString().replace('Z', '') + String(micros % 1000n).padStart(3, '0');
}

/**
 * Compares a peer's answer with the library's, before any timing: the same rows in the same
 * order, every value equal (averages to 1e-9 relative), p95 / p99 within the rank bound. Throws
 * with the first difference: a timing of a different answer would mean nothing.
 */
export async function assertSameAnswer(dataset: Dataset, c: BenchCase, peer: string, library: AnswerRow[], other: AnswerRow[]): Promise<void> {
  const fail = (what: string) => {
    throw new Error(`${peer} answers "${c.name}" differently from the library: ${what}`);
  };
  if (library.length !== other.length) fail(`${other.length} rows instead of ${library.length}`);
  const bounds = c.endpoint === 'functions.invocation-stats' ? await rankBounds(dataset, c) : null;
  library.forEach((row, i) => {
    const o = other[i]!;
    for (const [key, value] of Object.entries(row)) {
      const got = o[key];
      if (bounds && (key === 'p95_execution_time' || key === 'p99_execution_time')) {
        const b = bounds.get(String(row.timestamp));
        const [lo, hi] = b ? b[key === 'p95_execution_time' ? 'p95' : 'p99'] : [NaN, NaN];
        if (value === null && got === null) continue;
        if (!(typeof got === 'number' && got >= lo && got <= hi)) fail(`row ${i} ${key} = ${String(got)}, outside the rank bound [${lo}, ${hi}]`);
        continue;
      }
      if (key === 'avg_execution_time' && typeof value === 'number' && typeof got === 'number') {
        if (Math.abs(value - got) > 1e-9 * Math.max(1, Math.abs(value))) fail(`row ${i} ${key} = ${got} instead of ${value}`);
        continue;
      }
      if (!isDeepStrictEqual(value, got)) fail(`row ${i} ${key} = ${JSON.stringify(got)?.slice(0, 200)} instead of ${JSON.stringify(value)?.slice(0, 200)}`);
    }
  });
}
