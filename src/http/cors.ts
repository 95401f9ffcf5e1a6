import type { PlainResponse } from './exchange';
import type { CorsOptions } from './handler-options';

/** Response headers browsers may read besides the simple ones. */
const EXPOSED = 'X-Cache, X-Request-Id, X-Skipped-Files, Server-Timing, Retry-After';
const ALLOWED_REQUEST_HEADERS = 'X-API-KEY, Authorization, Accept, Content-Type, Content-Encoding, X-Request-Id';

/** The `Access-Control-Allow-Origin` value for a request's `Origin`, or null when it is not allowed. */
function allowedOrigin(cors: CorsOptions, origin: string | null): string | null {
  if (cors.origin === '*') return '*';
  if (origin === null) return null;
  const list = typeof cors.origin === 'string' ? [cors.origin] : cors.origin;
  return list.includes(origin) ? origin : null;
}

/** Adds the CORS headers of an actual (non-preflight) response. */
export function applyCors(headers: Record<string, string>, cors: CorsOptions | null, origin: string | null): void {
  if (cors === null) return;
  if (cors.origin !== '*') headers.Vary = headers.Vary ? `${headers.Vary}, Origin` : 'Origin';
  const allowed = allowedOrigin(cors, origin);
  if (allowed === null) return;
  headers['Access-Control-Allow-Origin'] = allowed;
  headers['Access-Control-Expose-Headers'] = EXPOSED;
}

/** The answer to a preflight `OPTIONS` request (only when CORS is on); the ingest routes allow POST instead. */
export function preflight(cors: CorsOptions, origin: string | null, methods = 'GET, HEAD, OPTIONS'): PlainResponse {
  const headers: Record<string, string> = {
    'Access-Control-Allow-Methods': methods,
    'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
    'Access-Control-Max-Age': String(cors.maxAge ?? 600),
  };
  applyCors(headers, cors, origin);
  return { status: 204, headers, body: null };
}
