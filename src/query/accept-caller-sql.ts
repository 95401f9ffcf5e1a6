import { InvalidParameterError } from '../errors';
import type { AnyEndpointDefinition } from '../definitions/definition';
import { statementOf } from '../definitions/plan-query';
import type { CheckedSql } from '../sandbox/validate-caller-sql';
import type { SourceSet } from '../sources/source-set';
import type { CallerSqlCheck } from './check-caller-sql';
import { CheckedSqlMemo } from './checked-sql-memo';

/** A statement that reads the request's clock. */
const READS_NOW = /\$now\b/;

/**
 * A caller's SQL as an instance takes it (docs/sandboxing.md): on an endpoint that is sandboxable,
 * as a string, checked against the endpoint's own statement for the request's source set (once
 * per text and set: `CheckedSqlMemo`), and keyed for the cache.
 *
 * @example
 * const callers = new AcceptCallerSql(check, new Set(['logs.all']));
 * const checked = await callers.accept(logsAll, 'select count(*) as n from edge_logs', BUILT_IN_SOURCE_SET);
 * callers.cacheKey(checked, new Date()); // the digest of its tree
 */
export class AcceptCallerSql {
  /**
   * Callers' SQL this instance accepted, by text, per source set (a set whose typed fields grew
   * translates the text anew, for the columns it has): a repeated request is not translated and
   * checked again. The memo of a set no request holds goes with it.
   */
  readonly #memos = new WeakMap<SourceSet, CheckedSqlMemo>();

  constructor(
    private readonly check: CallerSqlCheck,
    /** Endpoints that take a caller's SELECT: defined so, or named in the `sandboxable` option. */
    readonly sandboxable: ReadonlySet<string>,
  ) {}

  /** The checked SELECT of `sql` sent to `definition`, over `sources`; `InvalidParameterError` or `InvalidSqlError` when refused. */
  accept(definition: AnyEndpointDefinition, sql: unknown, sources: SourceSet): Promise<CheckedSql> {
    if (!this.sandboxable.has(definition.name)) {
      throw new InvalidParameterError('sql', `The endpoint ${definition.name} is not sandboxable: it does not take sql.`);
    }
    if (typeof sql !== 'string') throw new InvalidParameterError('sql', 'Parameter "sql" must be a string.');
    let memo = this.#memos.get(sources);
    if (!memo) this.#memos.set(sources, (memo = new CheckedSqlMemo()));
    return memo.get(definition.name, sql, () => this.check.check(statementOf(definition), sql, definition.maxRows, sources));
  }

  /**
   * The cache key of a checked SELECT. One that reads the clock (`$now`, what CURRENT_TIMESTAMP()
   * becomes) answers for one instant: its key holds that instant, so a cached endpoint never serves
   * another's answer.
   */
  cacheKey(checked: CheckedSql, now: Date): string {
    return READS_NOW.test(checked.sql) ? `${checked.key}@${now.toISOString()}` : checked.key;
  }
}
