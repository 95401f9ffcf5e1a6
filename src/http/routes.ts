import { LogEndpointsError } from '../errors';
import { decodePathSegment } from './query-string';

/** What a path (below the base path) asks for. */
export type Route =
  | { kind: 'health' }
  | { kind: 'metrics' }
  | { kind: 'openapi' }
  | { kind: 'list' }
  | { kind: 'query'; nameOrId: string }
  | { kind: 'catalog' }
  | { kind: 'dashboard' }
  | { kind: 'dashboard-asset'; name: string }
  | { kind: 'ingest' }
  // OTLP/HTTP's logs path (docs/ingest.md, "OpenTelemetry (OTLP)").
  | { kind: 'otlp-logs' }
  // Logflare's management API as self-hosted Studio's Log Drains page calls it (docs/supabase.md).
  | { kind: 'backends' }
  | { kind: 'backend'; token: string }
  | { kind: 'rules' }
  | { kind: 'sources' }
  | { kind: 'unknown' };

/** What the handler serves besides the API: the dashboard's routes exist only when it is on. */
export interface RouteOptions {
  dashboard?: boolean;
  /** `/metrics` needs no key. */
  openMetrics?: boolean;
}

/** Logflare's three ingest routes (docs/ingest.md), all the same here. */
const INGEST_PATHS = new Set(['/api/logs', '/logs', '/api/events']);

/** Routes anyone may call; every other path needs a key before it is even looked up. */
export function isPublic(route: Route, options: RouteOptions = {}): boolean {
  return route.kind === 'health' || (route.kind === 'metrics' && options.openMetrics === true) || route.kind === 'openapi' || route.kind === 'dashboard' || route.kind === 'dashboard-asset';
}

/**
 * Matches a raw (still percent-encoded) path. `/api/endpoints/query/<x>` takes a UUID or, as
 * Logflare clients call it, a name; `/api/endpoints/<x>` takes a name (or a UUID: both resolve
 * through the same lookup).
 */
export function matchRoute(path: string, options: RouteOptions = {}): Route {
  if (path === '/health') return { kind: 'health' };
  if (path === '/metrics') return { kind: 'metrics' };
  if (path === '/api/openapi.json') return { kind: 'openapi' };
  if (path === '/api/endpoints') return { kind: 'list' };
  if (path === '/api/catalog') return { kind: 'catalog' };
  if (options.dashboard) {
    if (path === '/' || path === '/dashboard' || path === '/dashboard/') return { kind: 'dashboard' };
    const asset = /^\/dashboard\/assets\/([^/]+)$/.exec(path);
    if (asset) return { kind: 'dashboard-asset', name: asset[1]! };
  }
  if (INGEST_PATHS.has(path)) return { kind: 'ingest' };
  if (path === '/v1/logs') return { kind: 'otlp-logs' };
  if (path === '/api/backends') return { kind: 'backends' };
  if (path === '/api/sources') return { kind: 'sources' };
  if (path === '/api/rules') return { kind: 'rules' };
  const backend = /^\/api\/backends\/([^/]+)$/.exec(path);
  if (backend) {
    const token = decodePathSegment(backend[1]!);
    if (token === null) throw new LogEndpointsError('bad_request', 400, 'The URL path has malformed percent-encoding.');
    return { kind: 'backend', token };
  }
  const m = /^\/api\/endpoints\/(?:query\/)?([^/]+)$/.exec(path);
  if (!m) return { kind: 'unknown' };
  const nameOrId = decodePathSegment(m[1]!);
  if (nameOrId === null) throw new LogEndpointsError('bad_request', 400, 'The URL path has malformed percent-encoding.');
  return { kind: 'query', nameOrId };
}

/** The path below the base path, or null when the request is outside it. */
export function stripBasePath(path: string, basePath: string): string | null {
  if (basePath === '') return path;
  if (path === basePath) return '/';
  return path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : null;
}
