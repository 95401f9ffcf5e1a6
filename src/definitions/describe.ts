import type { CachePolicy, ColumnSpec, EndpointDefinition, EndpointName, ParamSpec } from './definition';

/** A definition as data: what `ep.definitions`, `GET /api/endpoints` and OpenAPI show. */
export interface EndpointDescription {
  name: EndpointName;
  id: string;
  description: string;
  maxRows: number;
  cache: CachePolicy | null;
  /** Whether callers may send their own SELECT (`sql`) over its CTEs (docs/sandboxing.md). */
  sandboxed: boolean;
  params: readonly ParamSpec[];
  columns: readonly ColumnSpec[];
}

export function describeDefinition(d: EndpointDefinition): EndpointDescription {
  return Object.freeze({
    name: d.name,
    id: d.id,
    description: d.description,
    maxRows: d.maxRows,
    cache: d.cache ? Object.freeze({ ...d.cache }) : null,
    sandboxed: d.sandboxed,
    params: Object.freeze(d.params.map((p) => Object.freeze({ ...p }))),
    columns: Object.freeze(d.columns.map((c) => Object.freeze({ ...c }))),
  });
}
