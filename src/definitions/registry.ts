import { InvalidOptionError, NotFoundError } from '../errors';
import type { AnyEndpointDefinition } from './definition';
import { functionsInvocationStats } from './functions-invocation-stats';
import { logsAll } from './logs-all';
import { usageApiCounts } from './usage-api-counts';
import { printable } from '../util/printable';
import { methodName } from './method-name';

export { functionsInvocationStats, logsAll, usageApiCounts };

/** The three endpoints every instance has (definitions made with `defineEndpoint`, like a user's). */
export const BUILT_IN_ENDPOINTS = [functionsInvocationStats, logsAll, usageApiCounts] as const;

/** The built-in definitions' type. */
export type BuiltInEndpoint = (typeof BUILT_IN_ENDPOINTS)[number];

/** The names of the built-in endpoints. */
export type EndpointName = BuiltInEndpoint['name'];

/** The built-in definitions, in a stable order. */
export const DEFINITIONS: readonly AnyEndpointDefinition[] = BUILT_IN_ENDPOINTS;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The endpoints of one instance, found by name or by UUID (in any letter case). Names, UUIDs and
 * method names (`ep.usageApiCounts`: src/definitions/method-name.ts) are unique: a user definition
 * that collides with another (or a built-in) is refused.
 */
export class EndpointSet {
  private readonly byKey = new Map<string, AnyEndpointDefinition>();

  constructor(readonly list: readonly AnyEndpointDefinition[]) {
    const methods = new Map<string, AnyEndpointDefinition>();
    for (const d of list) {
      for (const key of [d.name, d.id]) {
        const other = this.byKey.get(key);
        if (other) {
          const what = key === d.name ? `name "${key}"` : `UUID ${key}`;
          throw new InvalidOptionError(`endpoints["${d.name}"]`, `Endpoint "${d.name}" has the ${what} of endpoint "${other.name}": names and UUIDs must be unique.`);
        }
        this.byKey.set(key, d);
      }
      const method = methodName(d.name);
      const same = methods.get(method);
      if (same) {
        throw new InvalidOptionError(`endpoints["${d.name}"]`, `Endpoints "${same.name}" and "${d.name}" would both be the method ep.${method}: rename one.`);
      }
      methods.set(method, d);
    }
  }

  /** The endpoint with this name or UUID, or null. */
  lookup(nameOrId: string): AnyEndpointDefinition | null {
    return this.byKey.get(UUID.test(nameOrId) ? nameOrId.toLowerCase() : nameOrId) ?? null;
  }

  /** The endpoint with this name or UUID, or a `not_found` error. */
  find(nameOrId: string): AnyEndpointDefinition {
    const found = this.lookup(nameOrId);
    if (!found) throw new NotFoundError(`No endpoint is named or identified by "${printable(nameOrId, 80)}".`);
    return found;
  }
}

/** The built-in endpoints as a set. */
export const BUILT_INS = new EndpointSet(BUILT_IN_ENDPOINTS);

/** A built-in endpoint by name or UUID, or a `not_found` error. */
export function findDefinition(nameOrId: string): AnyEndpointDefinition {
  return BUILT_INS.find(nameOrId);
}

/** The instance's endpoints: the built-ins, then the user's (checked to be definitions). */
export function endpointSet(user: unknown): EndpointSet {
  if (user === undefined) return BUILT_INS;
  if (!Array.isArray(user)) throw new InvalidOptionError('endpoints', 'endpoints must be a list of definitions made with defineEndpoint().');
  user.forEach((d, i) => {
    if (!d || typeof d !== 'object' || typeof d.bindValues !== 'function' || typeof d.sql?.duckdb !== 'string') {
      throw new InvalidOptionError(`endpoints[${i}]`, `endpoints[${i}] is not a definition: make it with defineEndpoint().`);
    }
  });
  return new EndpointSet([...BUILT_IN_ENDPOINTS, ...(user as AnyEndpointDefinition[])]);
}
