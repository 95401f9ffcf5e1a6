import type { CacheEntry } from '../cache/result-cache';
import type { AnyEndpointDefinition, CachePolicy } from '../definitions/definition';
import type { EngineResult } from '../engine/engine';
import { shapeLogflareRows } from '../rows/logflare-wire';
import { shapeRows } from '../rows/shape-rows';
import type { CheckedSql } from '../sandbox/validate-caller-sql';
import type { CacheStatus, EndpointsOptions, QueryResult } from './public-types';

/**
 * What the cache stores of one engine computation: the rows shaped by the definition's columns
 * (a caller's by its own: as its check typed them, a translated SELECT, else as the engine did),
 * in Logflare's wire format when asked (Supabase Studio reads it), with the files left out.
 *
 * @example
 * const entry = computedEntry(logsAll, engineResult, { computedAt: new Date().toISOString() });
 */
export function computedEntry(
  definition: AnyEndpointDefinition,
  result: EngineResult,
  how: { computedAt: string; caller?: CheckedSql; wireFormat?: EndpointsOptions['wireFormat']; rows?: EngineResult['rows'] },
): CacheEntry {
  const { caller } = how;
  const columns = caller ? (caller.columns?.map(({ name, kind }) => ({ name, type: kind })) ?? result.columns ?? []).map(({ name, type }) => ({ name, type, description: '' })) : null;
  const rows = (how.rows ?? result.rows).slice(0, definition.maxRows);
  const skippedFiles = result.skippedFiles ?? [];
  return {
    rows: columns && how.wireFormat === 'logflare' ? shapeLogflareRows(columns, rows) : shapeRows(columns ?? definition.columns, rows),
    computedAt: how.computedAt,
    engineMs: result.engineMs,
    ...(skippedFiles.length ? { skippedFiles } : {}),
    ...(columns ? { columns } : {}),
  };
}

/**
 * A call's answer from what the cache gave: its age and remaining lifetime at `nowMs` (the cache's
 * clock, real whatever `now` replays).
 *
 * @example
 * const answer = answerOf(logsAll, entry, 'miss', policy, Date.now());
 */
export function answerOf(definition: AnyEndpointDefinition, computed: CacheEntry, cache: CacheStatus, policy: CachePolicy | null, nowMs: number): QueryResult {
  const computedAt = new Date(computed.computedAt);
  const ageSeconds = Math.max(0, (nowMs - computedAt.getTime()) / 1000);
  return {
    result: computed.rows,
    endpoint: { name: definition.name, id: definition.id },
    cache,
    computedAt: computedAt.toISOString(),
    ageSeconds,
    ttlRemainingSeconds: policy ? Math.max(0, policy.ttlSeconds - ageSeconds) : null,
    engineMs: computed.engineMs,
    skippedFiles: computed.skippedFiles ?? [],
    ...(computed.columns ? { columns: computed.columns } : {}),
  };
}
