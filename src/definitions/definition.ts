import type { EngineParam, EngineValue, VariantCost } from '../engine/engine';
import type { BucketUnit } from '../time/units';
import type { ColumnSpec } from './columns';
import type { NormalizedParams, ParamSpec } from './params';
import type { SqlDialect } from '../sql/sql-scan';

export type { ColumnSpec, ColumnType } from './columns';
export type { NormalizedParams, ParamSpec } from './params';

/** Result cache policy of an endpoint; `null` on an endpoint means not cached. */
export interface CachePolicy {
  /** A result is served for at most this long after it was computed. */
  ttlSeconds: number;
  /** A key that is being read is re-queried in the background this often (0: never). */
  warmingSeconds: number;
}

/** A value a definition's `bind` hook may bind: text, a number, NULL, or an instant. */
export type BindValue = string | number | null | Date | { timestamp: bigint };

/** What a definition's `bind` hook gets: the call's checked parameters and the clock's instant. */
export interface BindContext {
  /** The instant windows are placed at (the `now` option's clock). */
  now: Date;
}

/** The full bucket series of a bucketed endpoint and the row of an empty bucket (`fillEmptyBuckets`). */
export interface BucketSeries {
  first: Date;
  last: Date;
  unit: BucketUnit;
  empty: (timestamp: bigint) => Record<string, EngineValue>;
}

/**
 * Everything one endpoint means, as made by `defineEndpoint`: identity, parameters, SQL per
 * engine, cache policy, columns, and how parameters and the clock become bound values. No engine
 * detail lives here. `P` and `R` are the typed call's parameters and row; `J` and `T` name its
 * `projectParam` and `tierParam` at the type level (`never`: none; `string`, the default: not
 * known), which an instance's options can make optional (`CallParams`).
 */
export interface EndpointDefinition<N extends string = string, P = Record<string, unknown>, R = Record<string, unknown>, J extends string = string, T extends string = string> {
  readonly name: N;
  /** Fixed forever: given, or derived from the name (the same UUID in every installation). */
  readonly id: string;
  readonly description: string;
  readonly maxRows: number;
  /** The policy it is cached with by default; null: not cached. */
  readonly cache: CachePolicy | null;
  /** Never cached, whatever the options say (its answers must always be fresh). */
  readonly neverCached: boolean;
  /** Whether callers may send their own SELECT over its CTEs (`sql`). */
  readonly sandboxable: boolean;
  readonly params: readonly ParamSpec[];
  readonly columns: readonly ColumnSpec[];
  /** The statement per engine; `duckdb` always. */
  readonly sql: Readonly<Partial<Record<SqlDialect, string>>> & { readonly duckdb: string };
  /** Every value the SQL is bound with for a call: the declared parameters, `bind`'s values and `$now`. */
  bindValues(params: NormalizedParams, now: Date): Record<string, EngineParam>;
  /** Checks of the parameters together (after each was checked alone); throws `InvalidParameterError`. */
  check?(params: NormalizedParams): void;
  /** The parameter naming the project, ignored (bound as NULL) with `singleProject`. */
  readonly projectParam?: string;
  /** The parameter choosing a tier's retention window, ignored (bound as NULL) with `tierWindow: false`. */
  readonly tierParam?: string;
  /** The bound timestamp no row can be older than (lets engines skip older files), if any. */
  readonly notBefore?: string;
  /**
   * The rows are the newest of one source, `ORDER BY timestamp DESC, id` with `LIMIT $<limit>`, and
   * `$<until>` an inclusive upper bound or NULL: engines may read one day at a time, newest first
   * (a statement not so ordered and limited is refused at start). Where the filter reads only the
   * project and time bounds, `$<until>` the one upper bound, they also read a compacted file's head
   * (each project's newest rows of it) instead of the file; the same of `sourceTables`' template
   * for a caller's newest rows. Told at start from the parse tree (newest-first-shape.ts;
   * docs/definitions.md, "Newest first").
   */
  readonly newestFirst?: { readonly limit: string; readonly until: string };
  /** A table per source of the instance for callers' SQL, per engine (`EndpointConfig.sourceTables`). */
  readonly sourceTables?: Readonly<Partial<Record<SqlDialect, string>>> & { readonly duckdb: string };
  /** Other statements by name (the dialects a variant does not give are `sql`'s): docs/definitions.md, "Variants". */
  readonly variants?: Readonly<Record<string, Readonly<Partial<Record<SqlDialect, string>>> & { readonly duckdb: string }>>;
  /** The variant a call runs, from its bound values; null: `sql`. */
  variantOf?(bound: Readonly<Record<string, EngineParam>>): string | null;
  /** Where a variant pays beside `sql`, by variant name: the engine runs `sql` elsewhere (docs/definitions.md, "Variants"). */
  readonly variantCosts?: Readonly<Record<string, VariantCost>>;
  /** Bucketed endpoints: the series of a call, for `fillEmptyBuckets`. */
  emptyBuckets?(params: NormalizedParams, now: Date): BucketSeries;
  /** Type-level only: the parameters and row of a typed call, and the names of its project and tier parameters. */
  readonly __types?: { params: P; row: R; projectParam: J; tierParam: T };
}

/** Any endpoint definition, whatever its types. */
export type AnyEndpointDefinition = EndpointDefinition<string, any, any>;

/** The parameters a typed call of this definition takes. */
export type DefinitionParams<D> = D extends EndpointDefinition<string, infer P, any> ? P : never;
/** The row this definition's calls return. */
export type DefinitionRow<D> = D extends EndpointDefinition<string, any, infer R> ? R : never;

/**
 * Parameters an instance's options make accepted and ignored (docs/definitions.md, "One project:
 * `singleProject`"): `'project'` with `singleProject: true`, `'tier'` with `tierWindow: false`.
 *
 * @example
 * const ep: EndpointsIgnoring<IgnoredParams> = await createEndpoints({ ...supabasePreset, sources }); // both
 */
export type IgnoredParams = 'project' | 'tier';

/**
 * The parameters a typed call of this definition takes on an instance that ignores `I`: the
 * definition's own, with its `projectParam` (when `I` holds `'project'`) and its `tierParam` (when
 * `I` holds `'tier'`) optional, as the instance accepts them missing.
 *
 * @example
 * type Single = CallParams<typeof usageApiCounts, 'project'>; // { interval: UsageInterval; project?: string | null }
 */
export type CallParams<D, I extends IgnoredParams = never> =
  D extends EndpointDefinition<string, infer P, any, infer J, infer T> ? OptionalKeys<P, ('project' extends I ? Known<J> : never) | ('tier' extends I ? Known<T> : never)> : never;

/** A parameter's name as the definition's type gives it; `string` (not known at the type level) is none. */
type Known<K extends string> = string extends K ? never : K;

/** `P` with the keys `K` optional (and nullable, as other optional parameters are); `P` itself when there are none. */
type OptionalKeys<P, K> = [K & keyof P] extends [never] ? P : Omit<P, K & keyof P> & { [Q in K & keyof P]?: P[Q] | null } extends infer O ? { [Q in keyof O]: O[Q] } : never;
