import type { QueryPlan, EngineStatement } from '../engine/engine';
import type { AnyEndpointDefinition, NormalizedParams } from './definition';

/**
 * What the engine runs for one call of a definition: its statement, every bound value (declared
 * parameters, `bind`'s values, `$now`, `$max_rows`) and the earliest instant a row can have.
 *
 * @example
 * const request = planQuery(logsAll, normalizeParams(logsAll, { project: 'abc' }), new Date());
 */
export function planQuery(definition: AnyEndpointDefinition, params: NormalizedParams, now: Date): QueryPlan {
  const values = definition.bindValues(params, now);
  const variant = definition.variantOf?.(values) ?? null;
  const earliest = definition.notBefore === undefined ? null : values[definition.notBefore];
  return {
    statement: statementOf(definition, variant),
    params: { ...values, max_rows: definition.maxRows },
    maxRows: definition.maxRows,
    ...(earliest && typeof earliest === 'object' ? { notBefore: earliest.timestamp } : {}),
  };
}

/** The statement an engine runs for a definition (its SQL per engine, or a variant's; its paging). */
export function statementOf(definition: AnyEndpointDefinition, variant: string | null = null): EngineStatement {
  const sql = variant === null ? definition.sql : definition.variants![variant]!;
  return {
    name: definition.name,
    sql,
    ...(variant === null ? {} : { fallback: definition.sql }),
    ...(variant !== null && definition.variantCosts?.[variant] ? { cheaperWhen: definition.variantCosts[variant] } : {}),
    ...(definition.newestFirst ? { newestFirst: definition.newestFirst } : {}),
    ...(definition.sourceTables ? { sourceTables: definition.sourceTables } : {}),
    ...(definition.projectParam ? { projectParam: definition.projectParam } : {}),
  };
}
