import type { AnyEndpointDefinition, NormalizedParams } from '../definitions/definition';

/** Bump when the stored entry format changes, so old entries in a shared store are not read. */
const FORMAT = 'v1';

/**
 * The cache key of a call: the endpoint's UUID (so calls by name and by UUID share it) and the
 * values of its declared parameters in declared order, after `normalizeParams`. Normalisation has
 * already made absent equal to empty, replaced fallback values (an unknown `interval` keys as
 * `1day`) and dropped unknown parameters, so none of those can split the cache. A sandboxed call
 * adds the key of its SQL (a digest of its parse tree: spaces, comments and keyword case do not
 * split the cache either).
 */
export function cacheKey(definition: AnyEndpointDefinition, params: NormalizedParams, sqlKey?: string): string {
  const values = definition.params.map((spec) => params[spec.name] ?? null);
  return `${FORMAT}:${definition.id}:${JSON.stringify(values)}${sqlKey === undefined ? '' : `:sql:${sqlKey}`}`;
}
