import type { EndpointQueryName, EngineParam, EngineRequest, EngineValue } from '../engine/engine';
import type { BucketUnit } from '../time/units';

/** The names of the endpoints. */
export type EndpointName = EndpointQueryName;

/** Result cache policy of an endpoint; `null` on an endpoint means never cached. */
export interface CachePolicy {
  /** A result is served for at most this long after it was computed. */
  ttlSeconds: number;
  /** A key that is being read is re-queried in the background this often. */
  warmingSeconds: number;
}

/** A declared query-string parameter. */
export interface ParamSpec {
  readonly name: string;
  readonly required: boolean;
  readonly description: string;
  /** `iso-timestamp` must parse as ISO 8601; `regex` must compile as an RE2 pattern. */
  readonly format: 'text' | 'iso-timestamp' | 'regex';
  /** The values with a meaning of their own. */
  readonly values?: readonly string[];
  /** What any other non-empty value behaves like; without it, another value is an error. */
  readonly otherwise?: string;
}

/** Column types of result rows; they drive every output format (`boolean`: sandboxed answers, docs/sandboxing.md). */
export type ColumnType = 'timestamp' | 'integer' | 'float' | 'text' | 'json' | 'boolean';

export interface ColumnSpec {
  readonly name: string;
  readonly type: ColumnType;
  readonly description: string;
}

/** Declared parameters after validation: absent and empty are both `null`. */
export type NormalizedParams = Readonly<Record<string, string | null>>;

/** What a definition plans for the engine, from normalized parameters and the clock. */
export interface QueryPlan {
  params: Readonly<Record<string, EngineParam>>;
  maxRows: number;
  notBefore?: bigint;
}

/**
 * Everything one endpoint means: identity, parameters, cache policy, columns, and how
 * parameters and the clock become engine parameters. No engine detail lives here.
 */
export interface EndpointDefinition {
  readonly name: EndpointName;
  /** Fixed forever: the same UUID in every installation. */
  readonly id: string;
  readonly description: string;
  readonly maxRows: number;
  readonly cache: CachePolicy | null;
  readonly sandboxed: false;
  readonly params: readonly ParamSpec[];
  readonly columns: readonly ColumnSpec[];
  /** The window starts and bucket units of this call, computed from `now`. */
  plan(params: NormalizedParams, now: Date): QueryPlan;
  /**
   * For bucketed endpoints: the full bucket series of this call and the row of an empty bucket,
   * used only when empty buckets are asked for (`fillEmptyBuckets`).
   */
  buckets?(params: NormalizedParams, now: Date): { first: Date; last: Date; unit: BucketUnit; empty: (timestamp: bigint) => Record<string, EngineValue> };
}

/** The query the engine runs for a definition and plan. */
export function engineRequest(definition: EndpointDefinition, plan: QueryPlan): EngineRequest {
  return { query: definition.name, params: plan.params, maxRows: plan.maxRows, notBefore: plan.notBefore };
}
