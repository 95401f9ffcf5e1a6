import type { EngineRequest, EngineStatement } from '../engine/engine';
import type { AnyEndpointDefinition, NormalizedParams } from './definition';

/**
 * What the engine runs for one call of a definition: its statement, every bound value (declared
 * parameters, `bind`'s values, `$now`, `$max_rows`) and the earliest instant a row can have.
 *
 * @example
 * const request = planQuery(logsAll, normalizeParams(logsAll, { project: 'abc' }), new Date());
 */
export function planQuery(definition: AnyEndpointDefinition, params: NormalizedParams, now: Date): EngineRequest {
  const values = definition.bindValues(params, now);
  const earliest = definition.notBefore === undefined ? null : values[definition.notBefore];
  return {
    statement: statementOf(definition),
    params: { ...values, max_rows: definition.maxRows },
    maxRows: definition.maxRows,
    ...(earliest && typeof earliest === 'object' ? { notBefore: earliest.timestamp } : {}),
  };
}

/** The statement an engine runs for a definition (its SQL per engine, its paging). */
export function statementOf(definition: AnyEndpointDefinition): EngineStatement {
  return { name: definition.name, sql: definition.sql, ...(definition.newestFirst ? { newestFirst: definition.newestFirst } : {}) };
}
