import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoints } from '../api/create-endpoints';
import { EngineError, InvalidOptionError } from '../errors';
import { createHandler, type FetchHandler } from '../http/create-handler';
import type { PlainRequest, PlainResponse } from '../http/exchange';
import { MAX_HEADER_BYTES, type HandlerOptions } from '../http/handler-options';
import { requestIdOf } from '../http/request-id';
import { sendError } from '../http/respond';
import { toNodeListener } from '../node/to-node-listener';

/** Options of `startServer`: the handler's, where to listen, and how long a shutdown may take. */
export interface ServerOptions extends HandlerOptions {
  host: string;
  port: number;
  /**
   * How long a graceful stop lets requests in flight finish, in ms (default 30 000). Past it they
   * are answered `503 closed` and the endpoints are closed (running engine queries interrupted).
   */
  shutdownGraceMs?: number;
}

export interface RunningServer {
  server: Server;
  /** `http://host:port` as bound (the real port when 0 was asked for). */
  url: string;
  /**
   * Graceful stop: no new connections, idle keep-alive connections closed, requests in flight
   * answered, then the endpoints closed. Requests still running after `graceMs` (default: the
   * `shutdownGraceMs` option) get a clean `503 closed` answer, never a reset connection.
   */
  stop: (graceMs?: number) => Promise<void>;
  /** Cuts every connection now (a second Ctrl+C). */
  force: () => void;
}

/** Default grace period of a graceful stop. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

/** After the grace period, how long a client may take to read its 503 before its connection is cut. */
const LINGER_MS = 5_000;

/**
 * How long an idle keep-alive connection stays open. Past a proxy's own idle timeout (Kong's, in
 * front of Supabase's analytics, keeps upstream connections 60 s; a load balancer's is often 60
 * too): with node's 5 s, the server closed a connection the proxy was reusing at that moment, and
 * the proxy answered its client 502 (a reset connection). Told to clients in `Keep-Alive: timeout=65`.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Serves `ep` over node:http on host:port; rejects with a clear message when the port is taken. */
export async function startServer(ep: Endpoints, options: ServerOptions): Promise<RunningServer> {
  const { host, port, shutdownGraceMs = DEFAULT_SHUTDOWN_GRACE_MS, ...handlerOptions } = options;
  if (typeof shutdownGraceMs !== 'number' || !Number.isFinite(shutdownGraceMs) || shutdownGraceMs < 0) {
    throw new InvalidOptionError('shutdownGraceMs', `shutdownGraceMs must be 0 or a positive number of milliseconds, not ${String(shutdownGraceMs)}.`);
  }
  const cutoff = new Cutoff(createHandler(ep, handlerOptions));
  const listener = toNodeListener(cutoff.handler);
  let stopping = false;
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    // While stopping, keep-alive connections close after their current answer.
    if (stopping) res.setHeader('Connection', 'close');
    listener(req, res);
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // A request's headers may take as long as an idle connection may last (node wants it longer).
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new InvalidOptionError('port', `Port ${port} on ${host} is already in use; choose another with --port.`) : error);
    });
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let stopped: Promise<void> | null = null;
  let closing: Promise<void> | null = null;
  const closeEndpoints = () => (closing ??= ep.close());
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    stop(graceMs = shutdownGraceMs) {
      stopped ??= (async () => {
        stopping = true;
        // A connection whose answer was in flight closes as soon as that answer is sent: node arms
        // an idle connection's timer with the keep-alive timeout read when the answer finishes
        // (a listener per answer did the same, on every request's path).
        server.keepAliveTimeout = 1;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        let linger: NodeJS.Timeout | undefined;
        const grace = setTimeout(() => {
          // Past the grace period: every request still running is answered now, and engine work is interrupted.
          cutoff.cut();
          void closeEndpoints();
          linger = setTimeout(() => server.closeAllConnections(), LINGER_MS);
          linger.unref();
        }, graceMs);
        grace.unref();
        await closed;
        clearTimeout(grace);
        clearTimeout(linger);
        await closeEndpoints();
      })();
      return stopped;
    },
    force: () => server.closeAllConnections(),
  };
}

/**
 * The handler, with a way to answer every request still running at once: the grace period's end.
 * Each request's answer is whichever comes first, the handler's or the cut's `503 closed`, so a
 * request is always answered exactly once and its connection is never reset.
 */
class Cutoff {
  readonly handler: FetchHandler;
  /** Requests running now, by the function that answers them (kept lean: this is on every request's path). */
  private readonly running = new Map<(response: PlainResponse) => void, PlainRequest>();
  private over = false;

  constructor(inner: FetchHandler) {
    const handle = (request: PlainRequest): Promise<PlainResponse> => {
      if (this.over) return Promise.resolve(closedAnswer(request));
      return new Promise<PlainResponse>((resolve, reject) => {
        this.running.set(resolve, request);
        inner.handle(request).then(
          (response) => {
            this.running.delete(resolve);
            resolve(response);
          },
          (error: unknown) => {
            this.running.delete(resolve);
            reject(error);
          },
        );
      });
    };
    // A hit is answered at once, so it never runs past the grace period; once cut, none is served.
    const hit = (request: PlainRequest): PlainResponse | null => (this.over ? null : (inner.hit?.(request) ?? null));
    this.handler = Object.assign((request: Request) => inner(request), { basePath: inner.basePath, dashboard: inner.dashboard, handle, hit });
  }

  cut(): void {
    this.over = true;
    for (const [answer, request] of this.running) answer(closedAnswer(request));
    this.running.clear();
  }
}

function closedAnswer(request: PlainRequest): PlainResponse {
  const response = sendError(new EngineError('closed', 'The server is shutting down; retry shortly.', { retryAfterSeconds: 1 }));
  response.headers['X-Request-Id'] = requestIdOf(request.header);
  // The connection goes with it: the server is closing.
  response.headers.Connection = 'close';
  return response;
}
