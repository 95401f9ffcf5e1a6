import type { Endpoints } from '../api/create-endpoints';
import { EngineError, InvalidParameterError, LogEndpointsError, NotFoundError } from '../errors';
import { MAX_NESTING } from '../ingest/json-nesting';
import { INGEST_BODY, type BodyIngest } from '../ingest/ingestor';
import { parseEvents } from '../ingest/parse-body';
import { readBody } from '../ingest/read-body';
import type { PlainRequest, PlainResponse } from './exchange';
import type { ResolvedOptions } from './handler-options';
import { parseQueryString } from './query-string';
import { sendJson } from './respond';
import { printable } from '../util/printable';

/** Logflare's answer to an accepted batch. */
const LOGGED = { message: 'Logged!' };

/**
 * What parsing a value of a body costs besides its bytes: the objects, keys and numbers of an
 * 11 MB event of 650,000 keys took about 110 MB of the parser's heap, 170 bytes a key.
 */
export const PARSE_BYTES_PER_VALUE = 128;

/**
 * Body bytes of the ingest requests in progress, and what parsing them costs, bounded: a burst of
 * large requests gets 503s instead of taking the process's memory. The bytes must fit; their
 * parse may cost more when no other request is in flight (one body's parse is bounded by itself,
 * and a body of many keys must not wait for room that never comes).
 */
export class InFlightBudget {
  private bytes = 0;
  private cost = 0;
  constructor(private readonly max: number) {}

  /**
   * Takes `bytes` of body and their parse `cost` (bytes included) for a request that holds
   * `own` of the cost already; throws `overloaded` when they do not fit.
   */
  take(bytes: number, cost: number, own: number): void {
    if (this.bytes + bytes > this.max || (this.cost + cost > this.max && this.cost > own)) {
      throw new EngineError('overloaded', 'Too many events are arriving at once; retry shortly.', { retryAfterSeconds: 1 });
    }
    this.bytes += bytes;
    this.cost += cost;
  }

  give(bytes: number, cost: number): void {
    this.bytes -= bytes;
    this.cost -= cost;
  }
}

/**
 * `POST {base}/api/logs` (and `/logs`, `/api/events`), Logflare's ingest (docs/ingest.md). The
 * source comes from `?source_name=` or `?source=<uuid>`, the key from the headers (or, as older
 * Logflare clients send it, `?api_key=`); the body is read within the limits, parsed, and handed
 * to `ep.ingest`, the one ingest path. Answers `200 {"message":"Logged!"}` once durable.
 */
export async function ingestRoute(
  ep: Endpoints,
  request: PlainRequest,
  search: string,
  config: ResolvedOptions,
  budget: InFlightBudget,
  mayIngest: (key: string | null) => boolean,
  presented: string | null,
): Promise<PlainResponse> {
  const method = request.method.toUpperCase();
  if (method !== 'POST') {
    throw Object.assign(new LogEndpointsError('method_not_allowed', 405, `Method ${printable(method, 32)} is not allowed here; send events with POST.`), {
      allow: 'POST',
    });
  }
  const query = parseQueryString(search);
  if (config.auth && !mayIngest(presented ?? query.get('api_key')?.[0] ?? null)) {
    throw new LogEndpointsError('unauthorized', 401, 'A valid API key is required (X-API-KEY header or Authorization: Bearer).');
  }
  if (!ep.storage) {
    throw new NotFoundError('This server keeps no events: start it with a data dir (serve --data-dir, or storage: { dataDir } in createEndpoints).');
  }
  const ref = query.get('source')?.[0] || query.get('source_name')?.[0];
  if (!ref) {
    // The names of this instance's sources (each one's first Logflare name).
    const names = ep.storage.sources.filter((n) => n.id !== null).map((n) => n.name);
    throw new InvalidParameterError('source_name', `Name the source: ?source_name=${names[0] ?? '<name>'}${names.length > 1 ? ` (or ${names.slice(1).join(', ')})` : ''}, or ?source=<uuid>.`);
  }
  // An unknown source is told before the body is read.
  ep.storage.resolveSource(ref);
  let taken = 0;
  let cost = 0;
  try {
    const body = await readBody(request.body?.() ?? null, {
      contentEncoding: request.header('content-encoding'),
      maxBytes: config.ingest.maxBodyBytes,
      maxNesting: MAX_NESTING,
      onBytes: (bytes, values) => {
        const more = bytes + values * PARSE_BYTES_PER_VALUE;
        budget.take(bytes, more, cost);
        taken += bytes;
        cost += more;
      },
    });
    const direct = (ep as Partial<BodyIngest>)[INGEST_BODY];
    // Parsed off the main thread when large; each element is checked as ep.ingest checks it.
    if (direct) await direct.call(ep, ref, body, request.header('content-type'));
    else await ep.ingest(ref, parseEvents(body, request.header('content-type')) as object[]);
  } finally {
    budget.give(taken, cost);
  }
  return sendJson(200, LOGGED);
}
