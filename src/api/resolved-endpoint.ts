import type { EndpointDescription } from '../definitions/describe';
import type { Endpoints, QueryOptions, QueryResult, RawParams } from './public-types';

/**
 * The key of an instance's internal method that looks an endpoint up once for a request (the
 * HTTP adapter's: it needs the endpoint's parameters to read the query string, then queries it).
 * Not public: `ep.query` and `ep.definitions` are the public way.
 */
export const RESOLVE_ENDPOINT = Symbol('log-endpoints.resolveEndpoint');

/** An endpoint looked up once: what it declares, and its query without a second look-up. */
export interface ResolvedEndpoint {
  /** As `ep.definitions` lists it; null when no endpoint has that name or UUID (its `query` then refuses with `not_found`, as `ep.query` does). */
  description: EndpointDescription | null;
  /** `ep.query` of this endpoint, counted and refused as `ep.query` is. */
  query(params: RawParams, options?: QueryOptions): Promise<QueryResult>;
}

/** What the HTTP adapter asks of an instance besides its public API. */
export interface EndpointResolver {
  [RESOLVE_ENDPOINT](nameOrId: string): ResolvedEndpoint;
}

/**
 * The endpoint a request names, looked up once by the instance. An `Endpoints` of another making
 * (a wrapper around one) is served through its public API: its `definitions`, then its `query`.
 *
 * @example
 * const endpoint = resolveEndpoint(ep, 'logs.all');
 * const result = await endpoint.query({ project: 'abc' }, { sql }); // no second look-up
 */
export function resolveEndpoint(ep: Endpoints, nameOrId: string): ResolvedEndpoint {
  const own = (ep as Partial<EndpointResolver>)[RESOLVE_ENDPOINT];
  if (own) return own.call(ep, nameOrId);
  const lower = nameOrId.toLowerCase();
  return {
    description: ep.definitions.find((d) => d.name === nameOrId || d.id === lower) ?? null,
    query: (params, options) => (ep as unknown as { query(nameOrId: string, params: RawParams, options?: QueryOptions): Promise<QueryResult> }).query(nameOrId, params, options),
  };
}
