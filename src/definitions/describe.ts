import type { CachePolicy, ColumnSpec, EndpointDefinition, ParamSpec } from './definition';

/** A definition as data: what `ep.definitions`, `GET /api/endpoints`, OpenAPI and the dashboard show. */
export interface EndpointDescription {
  name: string;
  id: string;
  description: string;
  maxRows: number;
  /** The policy in force (options included); null: not cached. */
  cache: CachePolicy | null;
  /** Whether callers may send their own SELECT (`sql`) over the endpoint's CTEs. */
  sandboxed: boolean;
  /** One of the three endpoints every instance has (false: declared by the user). */
  builtIn: boolean;
  params: readonly ParamSpec[];
  columns: readonly ColumnSpec[];
}

/** The description of a definition, with the cache policy and sandboxing in force. */
export function describeDefinition(d: EndpointDefinition, inForce: { cache: CachePolicy | null; sandboxed: boolean; builtIn: boolean }): EndpointDescription {
  return Object.freeze({
    name: d.name,
    id: d.id,
    description: d.description,
    maxRows: d.maxRows,
    cache: inForce.cache ? Object.freeze({ ...inForce.cache }) : null,
    sandboxed: inForce.sandboxed,
    builtIn: inForce.builtIn,
    params: Object.freeze(d.params.map((p) => Object.freeze({ ...p }))),
    columns: Object.freeze(d.columns.map((c) => Object.freeze({ ...c }))),
  });
}
