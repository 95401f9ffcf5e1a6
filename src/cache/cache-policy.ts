import { InvalidOptionError } from '../errors';
import type { AnyEndpointDefinition, CachePolicy } from '../definitions/definition';
import type { EndpointName } from '../definitions/registry';

/**
 * Per-endpoint cache policy overrides: a policy, or `null` to not cache that endpoint.
 *
 * @example
 * const cachePolicy: CachePolicyOverrides = { 'usage.api-counts': { ttlSeconds: 60, warmingSeconds: 20 }, 'functions.invocation-stats': null };
 */
export type CachePolicyOverrides = Partial<Record<EndpointName | (string & {}), CachePolicy | null>>;

/**
 * The policy each endpoint runs with: its definition's own, replaced by an override when one is
 * given, and none at all when caching is off. Bad overrides fail here, at start-up (`InvalidOptionError`).
 */
export function effectivePolicies(definitions: readonly AnyEndpointDefinition[], overrides: CachePolicyOverrides | undefined, cacheEnabled: boolean): ReadonlyMap<string, CachePolicy | null> {
  const known = new Set<string>(definitions.map((d) => d.name));
  for (const name of Object.keys(overrides ?? {})) {
    if (!known.has(name)) throw new InvalidOptionError(`cachePolicy["${name}"]`, `cachePolicy: no endpoint is named "${name}".`);
  }
  const out = new Map<string, CachePolicy | null>();
  for (const d of definitions) {
    const override = overrides?.[d.name];
    let policy = override === undefined ? d.cache : override;
    // An endpoint defined as never cached (logs.all) stays so, whatever the options say.
    if (policy !== null && d.neverCached) {
      throw new InvalidOptionError(`cachePolicy["${d.name}"]`, `cachePolicy: ${d.name} is never cached; its only allowed policy is null.`);
    }
    if (policy !== null) policy = checkPolicy(d.name, policy);
    out.set(d.name, cacheEnabled ? policy : null);
  }
  return out;
}

function checkPolicy(name: string, policy: CachePolicy): CachePolicy {
  const { ttlSeconds, warmingSeconds } = policy ?? ({} as CachePolicy);
  if (typeof ttlSeconds !== 'number' || !Number.isFinite(ttlSeconds) || ttlSeconds <= 0) {
    throw new InvalidOptionError(`cachePolicy["${name}"].ttlSeconds`, `cachePolicy["${name}"].ttlSeconds must be a positive number of seconds.`);
  }
  if (typeof warmingSeconds !== 'number' || !Number.isFinite(warmingSeconds) || warmingSeconds < 0) {
    throw new InvalidOptionError(`cachePolicy["${name}"].warmingSeconds`, `cachePolicy["${name}"].warmingSeconds must be 0 (no warming) or a positive number of seconds.`);
  }
  return Object.freeze({ ttlSeconds, warmingSeconds });
}
