import type { Endpoints } from '../api/create-endpoints';
import { resolveEndpoint } from '../api/resolved-endpoint';
import { InvalidOptionError, LogEndpointsError, NotFoundError } from '../errors';
import { createKeyCheck, presentedKey } from './api-keys';
import { applyCors, preflight } from './cors';
import { resolveOptions, type HandlerOptions, type ResolvedOptions } from './handler-options';
import { negotiateFormat } from './negotiate-format';
import { openApiDocument } from './openapi';
import { parseQueryString, singleValues } from './query-string';
import { requestIdOf } from './request-id';
import { errorOf, send, sendError, sendJson, sendResult } from './respond';
import { AnswerMemo } from './answer-memo';
import { fromFetchRequest, toFetchResponse, type PlainRequest, type PlainResponse } from './exchange';
import { isPublic, matchRoute, stripBasePath } from './routes';
import { metricsText } from './metrics-text';
import { createDashboard } from './serve-dashboard';
import { catalogDays } from './catalog-days';
import { InFlightBudget, ingestRoute, type IngestContext } from './ingest-route';
import { otlpLogsRoute } from './otlp-route';
import { callerSql, declaresBody } from './caller-sql';
import { drainsRoute } from './drains-route';
import { printable } from '../util/printable';

/** A fetch-style request handler, as Hono, Bun, Deno and service workers take it. */
export interface FetchHandler {
  (request: Request): Promise<Response>;
  /** The path prefix the handler answers under (`''` for the root). */
  readonly basePath: string;
  /** Whether the dashboard's routes are served (an adapter that passes other paths on needs to know). */
  readonly dashboard: boolean;
  /**
   * The same handler without fetch objects: adapters for servers that have their own request
   * and response types (`log-endpoints/node`) call this and skip two conversions per request.
   */
  readonly handle: (request: PlainRequest) => Promise<PlainResponse>;
  /**
   * The answer when it is a microcache hit, at once (no promise, no await), else null and the
   * request goes to `handle`. A hit is the most frequent request under a dashboard's load, and
   * the adapters' per-request awaits were a measurable part of its cost.
   */
  readonly hit?: (request: PlainRequest) => PlainResponse | null;
}

const ALLOW = 'GET, HEAD';
/** Query routes also take POST: a caller's SQL in a JSON body (docs/sandboxing.md). */
const ALLOW_QUERY = 'GET, HEAD, POST';

/**
 * The HTTP API (docs/http.md) as one fetch-style handler: the single place where HTTP is
 * translated to library calls. Throws when no API key is configured, unless `auth: false`.
 *
 * @example
 * const handler = createHandler(ep, { apiKeys: [process.env.API_KEY!] });
 * const response = await handler(new Request('http://localhost/api/endpoints/logs.all?project=abc&project_tier=PRO', { headers: { 'X-API-KEY': process.env.API_KEY! } }));
 */
export function createHandler(ep: Endpoints, options: HandlerOptions): FetchHandler {
  const config = resolveOptions(options);
  const checkKey = createKeyCheck(config.apiKeys);
  const checkIngestKey = createKeyCheck(config.ingestKeys);
  const ingest: IngestContext = {
    ep,
    config,
    budget: new InFlightBudget(config.ingest.maxBytesInFlight),
    mayIngest: (key) => checkKey(key) || checkIngestKey(key),
  };
  checkOtlpDefaultSource(ep, config.otlpDefaultSource);
  const memo = new AnswerMemo(config.microcacheMs);
  let openapi: string | null = null;
  // Reads the page build now: a missing build fails here, not as a blank page later.
  const dashboard = config.dashboard ? createDashboard(config.basePath, config.dashboard, config.auth) : null;

  async function dispatch(request: PlainRequest): Promise<PlainResponse> {
    if (request.url.length > config.maxUrlLength) {
      throw new LogEndpointsError('uri_too_long', 414, `The URL is longer than ${config.maxUrlLength} bytes.`);
    }
    const url = parseUrl(request.url);
    const path = stripBasePath(url.pathname, config.basePath);
    if (path === null) throw notFound();
    const route = matchRoute(path, { dashboard: dashboard !== null });
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS' && config.cors) {
      const methods = route.kind === 'ingest' || route.kind === 'otlp-logs' ? 'POST, OPTIONS' : route.kind === 'query' ? `${ALLOW_QUERY}, OPTIONS` : undefined;
      return preflight(config.cors, request.header('origin'), methods);
    }
    // Whether a path exists is only told to callers with a key.
    if (route.kind === 'unknown') {
      requireKey(request);
      throw notFound();
    }
    if (route.kind === 'ingest' || route.kind === 'otlp-logs') {
      const serve = route.kind === 'ingest' ? ingestRoute : otlpLogsRoute;
      return serve(ingest, request, url.search);
    }
    if (config.drains && (route.kind === 'backends' || route.kind === 'backend' || route.kind === 'rules')) {
      requireKey(request);
      return drainsRoute(config.drains, route, method, url.search, request);
    }
    if (route.kind === 'backend' || route.kind === 'rules') {
      requireKey(request);
      throw notFound();
    }
    if (method !== 'GET' && method !== 'HEAD' && !(method === 'POST' && route.kind === 'query')) {
      const allow = route.kind === 'query' ? ALLOW_QUERY : ALLOW;
      const use = route.kind === 'query' ? 'GET, HEAD or POST' : 'GET or HEAD';
      throw Object.assign(new LogEndpointsError('method_not_allowed', 405, `Method ${printable(method, 32)} is not allowed; use ${use}.`), { allow });
    }
    if (!isPublic(route, { openMetrics: config.openMetrics })) requireKey(request);

    switch (route.kind) {
      case 'health':
        return health();
      case 'metrics':
        return send(200, metricsText(ep.stats(), undefined, config.drains?.stats()), { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Cache-Control': 'no-store' });
      case 'openapi':
        openapi ??= JSON.stringify(openApiDocument(ep.definitions, { basePath: config.basePath, auth: config.auth }));
        return send(200, openapi, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' });
      case 'list':
        return sendJson(200, { result: ep.definitions });
      case 'query':
        return query(route.nameOrId, url.search, request);
      case 'catalog':
        return sendJson(200, { result: await ep.catalog({ days: catalogDays(url.search) }) });
      case 'dashboard':
        return dashboard!.page(request);
      case 'dashboard-asset':
        return dashboard!.asset(route.name, request);
      case 'backends':
        // A handler without drains (createHandler's `drains`) lists none, and creating one is
        // refused above (GET only).
        return sendJson(200, []);
      case 'sources':
        // Logflare's source list as Studio's Log Drains page reads it: each source by its fixed UUID and Logflare name.
        return sendJson(
          200,
          ep.sources.map((s) => ({ id: s.logflare.id, token: s.logflare.id, name: s.logflare.names[0] ?? s.name, source: s.name })),
        );
    }
  }

  function requireKey(request: PlainRequest): void {
    if (config.auth && !checkKey(presentedKey(request.header))) {
      if (checkIngestKey(presentedKey(request.header))) {
        throw new LogEndpointsError('unauthorized', 401, 'This key may only ingest events (POST /api/logs); queries need a query key.');
      }
      throw new LogEndpointsError('unauthorized', 401, 'A valid API key is required (X-API-KEY header or Authorization: Bearer).');
    }
  }

  async function query(nameOrId: string, search: string, request: PlainRequest): Promise<PlainResponse> {
    // Looked up once: its parameters read the query string, and it is queried without a second look-up.
    const endpoint = resolveEndpoint(ep, nameOrId);
    const description = endpoint.description;
    const { sql: sqlParam, ...params } = singleValues(parseQueryString(search), [...(description?.params.map((p) => p.name) ?? []), 'sql']);
    const caller = await callerSql(request, sqlParam);
    const format = negotiateFormat(request.header('accept'));
    const options = { ...(format === 'arrow' ? { format: 'arrow' as const } : {}), ...(caller ? { sql: caller.sql } : {}) };
    // An unknown name or UUID is refused by the library itself (404 not_found), `sql` on an endpoint that is not sandboxable too (400).
    const result = await endpoint.query(params, options);
    const response = sendResult(result, result.columns ?? description?.columns ?? [], format);
    // The memo is keyed by URL: an answer to SQL sent in a body is never reused.
    if (result.ttlRemainingSeconds !== null && memo.enabled && !caller?.inBody) {
      // The library's cache clock: the one the result's age and lifetime are measured on.
      const now = ep.cacheClock();
      memo.set(memoKey(request), response, now, now + result.ttlRemainingSeconds * 1000);
    }
    return response;
  }

  /** A repeated GET of a cached answer, served from the microcache after the key check. */
  function memoized(request: PlainRequest): PlainResponse | null {
    if (!memo.enabled || (request.method !== 'GET' && request.method !== 'HEAD') || declaresBody(request.header)) return null;
    const response = memo.get(memoKey(request), ep.cacheClock());
    if (response === null) return null;
    // Without a valid key the request takes the full path, which answers 401.
    if (config.auth && !checkKey(presentedKey(request.header))) return null;
    return response;
  }

  /** Never waits on the engine past `healthTimeoutMs`: a busy engine is reported, not waited for. */
  async function health(): Promise<PlainResponse> {
    const report = await ep.health({ timeoutMs: config.healthTimeoutMs });
    const { status } = report;
    // A log drain whose receiver fails is named, and the service stays up: its events wait in the
    // log (or, past the backlog bound, are dropped and counted), ingest goes on.
    const failing = config.drains?.stats().filter((d) => d.lastError !== null) ?? [];
    const degraded = failing.length ? [...report.degraded, 'drains'] : report.degraded;
    const drains = failing.map((d) => ({ id: d.id, type: d.type, backlogBytes: d.backlogBytes, dropped: d.dropped }));
    return sendJson(status === 'ok' ? 200 : 503, degraded.length ? { status, degraded, ...(drains.length ? { drains } : {}) } : { status });
  }

  /** What every answer gets on its way out: the request id, CORS, no body for HEAD. */
  function finish(request: PlainRequest, response: PlainResponse, requestId: string): PlainResponse {
    response.headers['X-Request-Id'] = requestId;
    applyCors(response.headers, config.cors, request.header('origin'));
    if (request.method.toUpperCase() === 'HEAD') response.body = null;
    return response;
  }

  const handle = async (request: PlainRequest): Promise<PlainResponse> => {
    const requestId = requestIdOf(request.header);
    let response: PlainResponse;
    try {
      response = memoized(request) ?? (await dispatch(request));
    } catch (thrown) {
      response = answerError(thrown, request, requestId, config);
    }
    return finish(request, response, requestId);
  };
  const hit = (request: PlainRequest): PlainResponse | null => {
    let response: PlainResponse | null;
    try {
      response = memoized(request);
    } catch {
      // Whatever went wrong is answered by `handle`, which takes the request next.
      return null;
    }
    return response && finish(request, response, requestIdOf(request.header));
  };
  const handler = async (request: Request): Promise<Response> => toFetchResponse(await handle(fromFetchRequest(request)));
  return Object.assign(handler, { basePath: config.basePath, dashboard: dashboard !== null, handle, hit });
}

function answerError(thrown: unknown, request: PlainRequest, requestId: string, config: ResolvedOptions): PlainResponse {
  const error = errorOf(thrown);
  const extra: Record<string, string> = error.code === 'method_not_allowed' ? { Allow: (error as { allow?: string }).allow ?? ALLOW } : {};
  if (error.status >= 500) {
    try {
      config.onError(thrown, { requestId, method: request.method, path: pathOf(request.url), status: error.status });
    } catch {
      // A failing logger must not turn an error answer into a crash.
    }
  }
  return sendError(error, extra);
}

/** A default OTLP source that names no source is refused when the handler is made, not at the first request. */
function checkOtlpDefaultSource(ep: Endpoints, source: string | null): void {
  if (source === null || !ep.storage) return;
  try {
    ep.storage.resolveSource(source);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    throw new InvalidOptionError('otlpDefaultSource', `createHandler: otlpDefaultSource names no source. ${error.message}`, { cause: error });
  }
}

/** Same URL (path and parameters exactly) and same output format: the same answer bytes. */
function memoKey(request: PlainRequest): string {
  return `${negotiateFormat(request.header('accept'))} ${request.url}`;
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new LogEndpointsError('bad_request', 400, 'The request target is malformed.');
  }
}

function notFound(): LogEndpointsError {
  return new LogEndpointsError('not_found', 404, 'No such route. Endpoints are under /api/endpoints/<name>.');
}

function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '?';
  }
}
