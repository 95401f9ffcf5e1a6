import { InvalidBodyError, LogEndpointsError } from '../errors';
import { publicDrain } from '../drains/drain-store';
import type { Drains } from '../drains/open-drains';
import { readBody } from '../ingest/read-body';
import type { PlainRequest, PlainResponse } from './exchange';
import { parseQueryString } from './query-string';
import { sendJson } from './respond';
import { printable } from '../util/printable';
import { parseExactJson } from '../util/exact-json';

/** Largest body of a drain or rule (a config with its headers is a few hundred bytes). */
const MAX_DRAIN_BODY_BYTES = 64 * 1024;

/** The routes of Logflare's management API that Studio's Log Drains page calls. */
export type DrainRoute = { kind: 'backends' } | { kind: 'backend'; token: string } | { kind: 'rules' };

const ALLOWED: Record<DrainRoute['kind'], string> = {
  backends: 'GET, HEAD, POST',
  backend: 'GET, HEAD, PUT, PATCH, DELETE',
  rules: 'GET, HEAD, POST',
};

/**
 * Studio's Log Drains calls (docs/supabase.md, "Log Drains") translated to the drain store:
 * `GET|POST /api/backends` (`?metadata[type]=log-drain` filters), `GET|PUT|DELETE
 * /api/backends/<token>`, `GET|POST /api/rules`. Secrets are answered `"REDACTED"`.
 */
export async function drainsRoute(drains: Drains, route: DrainRoute, method: string, search: string, request: PlainRequest): Promise<PlainResponse> {
  const store = drains.store;
  const read = method === 'GET' || method === 'HEAD';
  switch (route.kind) {
    case 'backends':
      if (read) return sendJson(200, store.list(parseQueryString(search).get('metadata[type]')?.[0]).map(publicDrain));
      if (method === 'POST') return sendJson(201, publicDrain(await store.create(await jsonBody(request))));
      break;
    case 'backend':
      if (read) return sendJson(200, publicDrain(store.get(route.token)));
      if (method === 'PUT' || method === 'PATCH') return sendJson(200, publicDrain(await store.update(route.token, await jsonBody(request))));
      if (method === 'DELETE') {
        await store.remove(route.token);
        // No body at all: a 204 has none (fetch's Response refuses even an empty one).
        return { status: 204, headers: { 'Cache-Control': 'no-store' }, body: null };
      }
      break;
    case 'rules':
      if (read) return sendJson(200, store.rules());
      if (method === 'POST') return sendJson(201, await store.addRule(await jsonBody(request)));
      break;
  }
  throw Object.assign(new LogEndpointsError('method_not_allowed', 405, `Method ${printable(method, 32)} is not allowed here; use ${ALLOWED[route.kind]}.`), { allow: ALLOWED[route.kind] });
}

async function jsonBody(request: PlainRequest): Promise<unknown> {
  const chunks = request.body?.() ?? null;
  const body = chunks === null ? Buffer.alloc(0) : await readBody(chunks, { contentEncoding: request.header('content-encoding'), maxBytes: MAX_DRAIN_BODY_BYTES });
  try {
    return parseExactJson(body.toString('utf8'));
  } catch {
    throw new InvalidBodyError('The body must be a JSON object.');
  }
}
