import type { Endpoints } from '../api/create-endpoints';
import { EngineError, InvalidParameterError, LogEndpointsError, NotFoundError } from '../errors';
import { MAX_NESTING } from '../ingest/json-nesting';
import { INGEST_BODY, type BodyIngest } from '../managed/ingestor';
import { parseEvents } from '../ingest/parse-body';
import { readBody } from '../ingest/read-body';
import type { PlainRequest, PlainResponse } from './exchange';
import type { ResolvedOptions } from './handler-options';
import { presentedKey } from './api-keys';
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
 * What every ingest route is given besides its request, made once per handler: the instance, the
 * handler's options, the in-flight budget of body bytes, and which keys may ingest.
 *
 * @example
 * const context: IngestContext = { ep, config, budget: new InFlightBudget(config.ingest.maxBytesInFlight), mayIngest: (key) => checkKey(key) };
 * return ingestRoute(context, request, url.search);
 */
export interface IngestContext {
  ep: Endpoints;
  config: ResolvedOptions;
  budget: InFlightBudget;
  /** Whether a key (presented, or null) may ingest: a query key or an ingest-only key. */
  mayIngest: (key: string | null) => boolean;
}

/** An ingest route: `POST` of a body to a path of `IngestContext`'s instance (`search`: the URL's `?...`). */
export type IngestRoute = (context: IngestContext, request: PlainRequest, search: string) => Promise<PlainResponse>;

/**
 * `POST {base}/api/logs` (and `/logs`, `/api/events`), Logflare's ingest (docs/ingest.md). The
 * source comes from `?source_name=` or `?source=<uuid>`, the key from the headers (or, as older
 * Logflare clients send it, `?api_key=`); the body is read within the limits, parsed, and handed
 * to `ep.ingest`, the one ingest path. Answers `200 {"message":"Logged!"}` once durable.
 */
export const ingestRoute: IngestRoute = async (context, request, search) => {
  const { ep, config, budget } = context;
  const query = parseQueryString(search);
  const storage = admitIngest(context, request, query);
  const ref = requestedSource(query, null);
  if (!ref) {
    // The names of this instance's sources (each one's first Logflare name).
    const names = storage.sources.filter((n) => n.id !== null).map((n) => n.name);
    throw new InvalidParameterError('source_name', `Name the source: ?source_name=${names[0] ?? '<name>'}${names.length > 1 ? ` (or ${names.slice(1).join(', ')})` : ''}, or ?source=<uuid>.`);
  }
  // An unknown source is told before the body is read.
  storage.resolveSource(ref);
  await withIngestBody(request, config, budget, 'json', async (body) => {
    const direct = (ep as Partial<BodyIngest>)[INGEST_BODY];
    // Parsed off the main thread when large; each element is checked as ep.ingest checks it.
    if (direct) await direct.call(ep, ref, body, request.header('content-type'));
    else await ep.ingest(ref, parseEvents(body, request.header('content-type')) as object[]);
  });
  return sendJson(200, LOGGED);
};

/**
 * The checks of every ingest route before anything else: `POST`, a key that may ingest (from the
 * headers or, as older Logflare clients send it, `?api_key=`), and a data dir. Returns the
 * instance's managed storage.
 */
export function admitIngest({ ep, config, mayIngest }: IngestContext, request: PlainRequest, query: Map<string, string[]>): NonNullable<Endpoints['storage']> {
  const method = request.method.toUpperCase();
  if (method !== 'POST') {
    throw Object.assign(new LogEndpointsError('method_not_allowed', 405, `Method ${printable(method, 32)} is not allowed here; send events with POST.`), {
      allow: 'POST',
    });
  }
  if (config.auth && !mayIngest(presentedKey(request.header) ?? query.get('api_key')?.[0] ?? null)) {
    throw new LogEndpointsError('unauthorized', 401, 'A valid API key is required (X-API-KEY header or Authorization: Bearer).');
  }
  if (!ep.storage) {
    throw new NotFoundError('This server keeps no events: start it with a data dir (serve --data-dir, or storage: { dataDir } in createEndpoints).');
  }
  return ep.storage;
}

/** The source a request names: `?source=<uuid>`, else `?source_name=`, else the `x-source` header (where given); null when none. */
export function requestedSource(query: Map<string, string[]>, header: string | null): string | null {
  return query.get('source')?.[0] || query.get('source_name')?.[0] || header || null;
}

/** Parse cost of a protobuf body: one value for every 8 bytes (a key-value pair of an OTLP record takes about that many at least). */
const PROTOBUF_BYTES_PER_VALUE = 8;

/**
 * Reads an ingest body within the route's limits (`maxBodyBytes` after decompression, gzip and
 * deflate) and runs `use` on it while its bytes and their parse's cost are held in the in-flight
 * `budget`: a JSON body's values are counted as it arrives (and its nesting bounded), a protobuf
 * body's are estimated from its size.
 */
export async function withIngestBody<T>(request: PlainRequest, config: ResolvedOptions, budget: InFlightBudget, kind: 'json' | 'protobuf', use: (body: Buffer) => Promise<T>): Promise<T> {
  let taken = 0;
  let cost = 0;
  try {
    const body = await readBody(request.body?.() ?? null, {
      contentEncoding: request.header('content-encoding'),
      maxBytes: config.ingest.maxBodyBytes,
      ...(kind === 'json' ? { maxNesting: MAX_NESTING } : {}),
      onBytes: (bytes, values) => {
        const counted = kind === 'json' ? values : Math.ceil(bytes / PROTOBUF_BYTES_PER_VALUE);
        const more = bytes + counted * PARSE_BYTES_PER_VALUE;
        budget.take(bytes, more, cost);
        taken += bytes;
        cost += more;
      },
    });
    return await use(body);
  } finally {
    budget.give(taken, cost);
  }
}
