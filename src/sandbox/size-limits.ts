import { InvalidSqlError } from '../errors';

/**
 * How much a caller's SQL may build (docs/sandboxing.md, "Limits"). DuckDB computes an expression
 * for 2048 rows at a time, and its memory limit does not count those values, so a query is held
 * to what its values can take for one row, added up over every expression (`rowBytes`, beside
 * `dataFactor` times an event's size and `poolFactor` times DuckDB's limit), and to the constants
 * it folds while planning (`constantBytes`, where no interrupt reaches).
 */
export const SIZE_LIMITS = {
  /** Elements of a `range`, `generate_series`, `equi_width_bins` (constant arguments only). */
  listElements: 100_000,
  /** Bytes of the constants DuckDB computes while it plans the query, all together. */
  constantBytes: 8 * 2 ** 20,
  /** Bytes for one row of all the values computed per row, beside those that grow with the data. */
  rowBytes: 256 * 2 ** 10,
  /** All the values computed for one row, in events' sizes. */
  dataFactor: 256,
  /** All the values that hold an aggregate's whole state (`list`, `string_agg`), in DuckDB's memory limits. */
  poolFactor: 4,
  /** Bytes of one row of the answer, beside its events' values (up to the endpoint's max rows of them go to the caller). */
  answerRowBytes: 64 * 2 ** 10,
  /** One row of the answer, in events' sizes. */
  answerDataFactor: 128,
} as const;

/** The most bytes a value of fixed size takes (DECIMAL and UUID 16, the rest 8 or less). */
export const FIXED_VALUE = 16;

/** Refuses a caller's SELECT as too large (`InvalidSqlError`, rule `too_large`), pointing to the limits. */
export function refuseTooLarge(message: string): never {
  throw new InvalidSqlError('too_large', `${message} The limits are in the docs (sandboxing).`);
}
