import { connect, constants, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { InternalError } from '../util/internal-error';
import type { DrainRequest } from './wire-formats';

/** Headers HTTP/2 forbids (RFC 9113, 8.2.2): a drain's own headers may name them; they are left out, as HTTP/2 clients do. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

/**
 * Sends drains' requests over HTTP/2 (a webhook drain made with `http: "http2"`, docs/supabase.md,
 * "Log Drains"): one session per receiver's origin, kept between batches and closed after
 * `idleMs` without a request; `https` negotiates `h2` by ALPN, `http` speaks HTTP/2 with prior
 * knowledge (h2c), as Logflare's HTTP/2 pool does. A session that fails or is sent away is
 * forgotten, so the next attempt connects again; each request has `timeoutMs`.
 *
 * @example
 * const sender = new Http2Sender();
 * const status = await sender.send({ url: 'http://receiver:8080/hook', headers: {}, body, http: 'http2' });
 * sender.close();
 */
export class Http2Sender {
  private readonly sessions = new Map<string, ClientHttp2Session>();

  constructor(private readonly options: { timeoutMs?: number; idleMs?: number } = {}) {}

  /** Resolves with the answer's status once its body is read (and discarded); rejects on a network failure or the timeout. */
  send(request: DrainRequest): Promise<number> {
    const url = new URL(request.url);
    const headers: OutgoingHttpHeaders = { ':method': 'POST', ':path': `${url.pathname}${url.search}`, 'content-length': request.body.byteLength };
    for (const [name, value] of Object.entries(request.headers)) if (!CONNECTION_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    const session = this.session(url.origin);
    return new Promise<number>((resolve, reject) => {
      let status = 0;
      const stream = session.request(headers);
      stream.setTimeout(this.options.timeoutMs ?? 30_000, () => stream.close(constants.NGHTTP2_CANCEL));
      stream.on('response', (answer) => (status = Number(answer[':status'])));
      stream.on('error', reject);
      stream.on('close', () => {
        if (status && stream.rstCode === constants.NGHTTP2_NO_ERROR) resolve(status);
        // Like a connection reset: the forwarder counts a failure and tries the batch again.
        else reject(new InternalError('ECONNRESET', `HTTP/2 stream to ${url.origin} closed before its answer (code ${stream.rstCode})`));
      });
      stream.resume();
      stream.end(request.body);
    });
  }

  /** Closes every session: requests in flight finish, none starts. */
  close(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
  }

  private session(origin: string): ClientHttp2Session {
    const kept = this.sessions.get(origin);
    if (kept && !kept.closed && !kept.destroyed) return kept;
    const session = connect(origin);
    const forget = () => {
      if (this.sessions.get(origin) === session) this.sessions.delete(origin);
    };
    // A connection that fails rejects the requests on it (their streams' errors); the session is only forgotten.
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    session.setTimeout(this.options.idleMs ?? 30_000, () => session.close());
    this.sessions.set(origin, session);
    return session;
  }
}
