import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Engine, CompiledQuery, EngineResult } from '../../src/index';
import { QueryGate } from '../../src/util/query-gate';
import { MAX_HEADER_BYTES } from '../../src/node';

/**
 * A real node:http server on 127.0.0.1 and a free port, set up as docs/http.md says (URLs up to
 * 64 KiB: `maxHeaderSize`). `close` ends keep-alive sockets too.
 */
export async function listen(listener: RequestListener): Promise<{ server: Server; port: number; url: string; close: () => Promise<void> }> {
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Sends raw bytes as an HTTP/1.1 request over its own socket and returns the status line's code
 * and the whole answer. For requests `fetch` refuses to send (broken encodings, odd methods).
 */
export function rawRequest(port: number, head: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : 0, text });
    });
    // Written without half-closing: the server closes after its answer (Connection: close).
    socket.write(head, 'latin1');
  });
}

/**
 * An engine whose queries wait until the test releases them, behind the same `QueryGate` the
 * DuckDB engine uses: the deterministic way to have queries "in flight" or a full queue.
 */
export function heldEngine(options: { maxConcurrent?: number; maxQueued?: number; rows?: EngineResult['rows'] } = {}) {
  const gate = new QueryGate({ maxConcurrent: options.maxConcurrent ?? 4, maxQueued: options.maxQueued ?? 64 });
  const held: Array<() => void> = [];
  const arrivals: Array<() => void> = [];
  let started = 0;
  let opened = false;
  let fail: ((request: CompiledQuery) => Error | null) | null = null;
  const engine: Engine = {
    target: { dialect: 'duckdb' },
    run: (request) =>
      gate.run(async () => {
        started++;
        arrivals.splice(0).forEach((wake) => wake());
        if (!opened) await new Promise<void>((resolve) => held.push(resolve));
        const error = fail?.(request);
        if (error) throw error;
        return { rows: options.rows ?? [], engineMs: 1.5 };
      }),
    checkPattern: async () => null,
    ping: async () => undefined,
    inspectSources: async () => [],
    close: async () => undefined,
  };
  return {
    engine,
    gate,
    /** Resolves once `n` queries are running inside the engine (past the gate). */
    async running(n: number): Promise<void> {
      while (started < n) await new Promise<void>((resolve) => arrivals.push(resolve));
    },
    /** Lets every running query finish. */
    releaseAll(): void {
      held.splice(0).forEach((release) => release());
    },
    /** Lets every running and every later query through. */
    open(): void {
      opened = true;
      held.splice(0).forEach((release) => release());
    },
    /** Makes released queries fail with this error. */
    failWith(make: (request: CompiledQuery) => Error | null): void {
      fail = make;
    },
  };
}

/**
 * One request over node:http with an optional body, for what `fetch` cannot send (a GET with a
 * JSON body); answers the status, the body and the headers as JSON text.
 */
export function sendRequest(port: number, method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string; headers: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(options.body)) });
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: JSON.stringify(res.headers) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
