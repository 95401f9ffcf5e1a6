import type { IncomingMessage, ServerResponse } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { listen } from './http';

/** One request a drain's receiver got, its body decompressed. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/**
 * A log drain's receiver on loopback: records every request; `answer` picks each status
 * (default 200) and may hold the answer until the test lets it go. `until(test)` resolves once
 * what was received passes `test` (checked at each request), `next(n)` once n requests came.
 */
export async function drainReceiver() {
  const received: Received[] = [];
  const waiters: { test: (r: readonly Received[]) => boolean; resolve: () => void }[] = [];
  let answer: (index: number) => number | Promise<number> = () => 200;
  const server = await listen((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const index = received.length;
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw });
      for (const w of waiters.splice(0)) {
        if (w.test(received)) w.resolve();
        else waiters.push(w);
      }
      void Promise.resolve(answer(index)).then((status) => res.writeHead(status).end());
    });
  });
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
  };
}
