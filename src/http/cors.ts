import type { CorsOptions } from './handler-options';

/** Response headers browsers may read besides the simple ones. */
const EXPOSED = 'X-Cache, X-Request-Id, Server-Timing, Retry-After';
const ALLOWED_REQUEST_HEADERS = 'X-API-KEY, Authorization, Accept, Content-Type, X-Request-Id';

/** The `Access-Control-Allow-Origin` value for a request's `Origin`, or null when it is not allowed. */
function allowedOrigin(cors: CorsOptions, origin: string | null): string | null {
  if (cors.origin === '*') return '*';
  if (origin === null) return null;
  const list = typeof cors.origin === 'string' ? [cors.origin] : cors.origin;
  return list.includes(origin) ? origin : null;
}

/** Adds the CORS headers of an actual (non-preflight) response. */
export function applyCors(headers: Headers, cors: CorsOptions | null, origin: string | null): void {
  if (cors === null) return;
  if (cors.origin !== '*') headers.append('Vary', 'Origin');
  const allowed = allowedOrigin(cors, origin);
  if (allowed === null) return;
  headers.set('Access-Control-Allow-Origin', allowed);
  headers.set('Access-Control-Expose-Headers', EXPOSED);
}

/** The answer to a preflight `OPTIONS` request (only when CORS is on). */
export function preflight(cors: CorsOptions, origin: string | null): Response {
  const headers = new Headers();
  applyCors(headers, cors, origin);
  headers.set('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
  headers.set('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
  headers.set('Access-Control-Max-Age', String(cors.maxAge ?? 600));
  return new Response(null, { status: 204, headers });
}
