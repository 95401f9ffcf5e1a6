import type { IncomingMessage, ServerResponse } from 'node:http';
import { LogEndpointsError } from '../errors';
import type { FetchHandler } from '../http/create-handler';
import type { PlainRequest, PlainResponse } from '../http/exchange';
import { matchRoute, stripBasePath } from '../http/routes';
import { declaresBody } from '../http/caller-sql';

/**
 * A `node:http` request listener; Express and Connect call it as middleware with a third
 * argument `next`, which it calls for paths that are not routes of the handler.
 */
export type NodeListener = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

/**
 * Turns the fetch-style handler into a `node:http` request listener (also Express / Connect
 * middleware, passing other paths on to `next`). The original URL is used when a framework has
 * rewritten `req.url` (`req.originalUrl`), so the handler's `basePath` means the same everywhere.
 *
 * @example
 * http.createServer(toNodeListener(createHandler(ep, { apiKeys: ['secret'] }))).listen(4000);
 */
export function toNodeListener(handler: FetchHandler): NodeListener {
  return (req, res, next) => {
    const target = originForm((req as IncomingMessage & { originalUrl?: string }).originalUrl ?? req.url ?? '/');
    if (next && !isRoute(target, handler.basePath, handler.dashboard)) {
      next();
      return;
    }
    serve(handler, req, res, target).catch((error: unknown) => {
      // Only reached when the socket broke mid-answer: the handler itself never throws.
      if (!res.headersSent) {
        res.statusCode = 500;
        res.end();
      } else {
        res.destroy(error instanceof Error ? error : undefined);
      }
    });
  };
}

async function serve(handler: FetchHandler, req: IncomingMessage, res: ServerResponse, target: string): Promise<void> {
  // HEAD bodies mean nothing, and GET ones only when declared (a caller's SQL as JSON, see
  // docs/sandboxing.md): others are drained so keep-alive works. Bodies of other methods (POST)
  // and declared GET bodies go to the handler, which reads them within its limit.
  const header = (name: string) => headerOf(req, name);
  const withBody = req.method === 'GET' ? declaresBody(header) : req.method !== 'HEAD';
  if (!withBody) req.resume();
  if (!target.startsWith('/')) {
    // Its body is discarded unread, as a refused body is below.
    req.resume();
    return send(req, res, badRequest());
  }
  const request: PlainRequest = {
    method: req.method ?? 'GET',
    // Always absolute, so a target such as `//host/x` stays a path and never names a host.
    url: `http://localhost${target}`,
    header,
    body: withBody ? () => chunksOf(req) : undefined,
  };
  // A microcache hit is answered without a single await.
  const cached = withBody ? null : (handler.hit?.(request) ?? null);
  if (cached) return send(req, res, cached);
  const response = await handler.handle(request);
  // Whatever the handler left unread (refused before or during reading) is discarded, so the
  // client can finish sending and read the answer, and keep-alive goes on.
  if (withBody && !req.readableEnded) req.resume();
  send(req, res, response);
}

function send(req: IncomingMessage, res: ServerResponse, response: PlainResponse): void {
  res.writeHead(response.status, response.headers);
  res.end(response.body === null || req.method === 'HEAD' ? undefined : response.body);
}

/**
 * The request's chunks as they arrive. Not `for await (... of req)`: leaving that loop early (a
 * body past the limit) destroys the request and its socket, and the 413 could not be sent.
 */
async function* chunksOf(req: IncomingMessage): AsyncGenerator<Uint8Array> {
  for (;;) {
    const chunk: Buffer | null = req.read();
    if (chunk !== null) {
      yield chunk;
      continue;
    }
    if (req.readableEnded) return;
    if (req.destroyed) throw cutShort();
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        req.off('readable', done).off('end', done).off('close', done).off('error', fail);
        resolve();
      };
      const fail = (error: Error) => {
        req.off('readable', done).off('end', done).off('close', done).off('error', fail);
        reject(cutShort(error));
      };
      req.on('readable', done).on('end', done).on('close', done).on('error', fail);
    });
  }
}

/** A client that went away mid-body: its fault, not the server's (no 5xx, no onError). */
function cutShort(cause?: unknown): LogEndpointsError {
  return new LogEndpointsError('bad_request', 400, 'The request body ended early (the connection was closed).', { cause });
}

/** A request header as one string (node joins repeated ones with ", " already, but for cookies). */
function headerOf(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name.toLowerCase()];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function badRequest(): PlainResponse {
  const body = Buffer.from(JSON.stringify({ error: { code: 'bad_request', message: 'The request target is malformed.', status: 400 } }));
  return { status: 400, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.byteLength) }, body };
}

/**
 * Whether the handler answers this target: as middleware, other paths go on to the app's own
 * routes. Unknown endpoint names under /api/endpoints are routes (the handler answers 401/404).
 */
function isRoute(target: string, basePath: string, dashboard: boolean): boolean {
  let pathname: string;
  try {
    pathname = new URL(target, 'http://localhost').pathname;
  } catch {
    return true;
  }
  const path = stripBasePath(pathname, basePath);
  if (path === null) return false;
  try {
    return matchRoute(path, { dashboard }).kind !== 'unknown';
  } catch {
    // A malformed path under the base path: the handler answers it with a 400.
    return true;
  }
}

/** `http://host/path?q` (absolute form, as sent to proxies) becomes `/path?q`; other targets stay. */
function originForm(target: string): string {
  if (!/^https?:\/\//i.test(target)) return target;
  try {
    const url = new URL(target);
    return `${url.pathname}${url.search}`;
  } catch {
    return target;
  }
}
