import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { listen } from './http';

/** One request a drain's receiver got, its body decompressed. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** `1.1`, or `2.0` on a receiver made with `http2`. */
  httpVersion: string;
}

/**
 * A log drain's receiver on loopback: records every request; `answer` picks each status
 * (default 200) and may hold the answer until the test lets it go. `until(test)` resolves once
 * what was received passes `test` (checked at each request), `next(n)` once n requests came.
 * With `http2` it speaks HTTP/2 only, in clear text (h2c): an HTTP/1.1 request gets no answer.
 */
export async function drainReceiver(options: { http2?: boolean } = {}) {
  const received: Received[] = [];
  const waiters: { test: (r: readonly Received[]) => boolean; resolve: () => void }[] = [];
  let answer: (index: number) => number | Promise<number> = () => 200;
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const index = received.length;
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body, httpVersion: req.httpVersion });
      for (const w of waiters.splice(0)) {
        if (w.test(received)) w.resolve();
        else waiters.push(w);
      }
      void Promise.resolve(answer(index)).then((status) => res.writeHead(status).end());
    });
  };
  const server = options.http2 ? await listenHttp2(handle) : await listen(handle);
  const until = (test: (r: readonly Received[]) => boolean) => new Promise<void>((resolve) => (test(received) ? resolve() : waiters.push({ test, resolve })));
  return {
    url: server.url,
    received,
    answer: (fn: typeof answer) => {
      answer = fn;
    },
    until,
    next: (count: number) => until((r) => r.length >= count),
    json: (i: number) => JSON.parse(received[i]!.body.toString('utf8')) as unknown,
    /** The ids of the webhook events received at `path`, in order of arrival (repeats kept). */
    webhookIds: (path?: string) => received.filter((r) => path === undefined || r.url === path).flatMap((r) => (JSON.parse(r.body.toString('utf8')) as { id: string }[]).map((e) => e.id)),
    close: server.close,
    /** HTTP/2: ends every client's session (a GOAWAY), as a receiver restarting does. */
    dropSessions: async () => ('dropSessions' in server ? server.dropSessions() : undefined),
  };
}

/** An HTTP/2 server in clear text on loopback (h2c, prior knowledge), closed with its sessions. */
async function listenHttp2(handle: (req: Http2ServerRequest, res: Http2ServerResponse) => void) {
  const server = createServer(handle);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session) => (sessions.add(session), session.on('close', () => sessions.delete(session))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropSessions: async () => {
      await Promise.all([...sessions].map((session) => new Promise<void>((resolve) => session.close(resolve))));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
