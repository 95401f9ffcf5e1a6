import { gzipSync, type ZlibOptions } from 'node:zlib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createHandler } from '../src/http';
import { createEndpoints, InvalidBodyError, type Endpoints } from '../src/index';
import { quoteBigTimestamps } from '../src/ingest/big-timestamps';
import { MAX_NESTING, NestingScan } from '../src/ingest/json-nesting';
import { OFF_THREAD_BYTES, PARSER_IDLE_MS, parserIdleMs, parserRunning } from '../src/ingest/parse-worker';
import { Prng } from '../src/fixtures/prng';
import { tempDir } from './support/log-files';
import { largestEventBytes } from '../src/managed/largest-event';
import { memoryBudget } from '../src/duckdb/memory-budget';

// Counts the bytes every gunzip inflates, to see how much of a refused body was never inflated.
const inflated = vi.hoisted(() => ({ bytes: 0 }));
vi.mock('node:zlib', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:zlib')>();
  const createGunzip = (options?: ZlibOptions) => {
    const gunzip = actual.createGunzip(options);
    const push = gunzip.push.bind(gunzip);
    gunzip.push = (chunk: Buffer | null, encoding?: BufferEncoding) => {
      if (chunk !== null) inflated.bytes += chunk.length;
      return push(chunk, encoding);
    };
    return gunzip;
  };
  return { ...actual, createGunzip };
});

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-bodies-');
afterAll(() => tmp.cleanup());

let n = 0;
async function withStorage(test: (ep: Endpoints, post: (body: string | Uint8Array, headers?: Record<string, string>) => Promise<{ status: number; json: any }>) => Promise<void>) {
  const ep = await createEndpoints({ storage: { dataDir: tmp.path(`data-${++n}`) }, now: () => new Date(NOW), cache: false });
  const handler = createHandler(ep, { auth: false });
  const post = async (body: string | Uint8Array, headers: Record<string, string> = {}) => {
    const response = await handler(new Request('http://localhost/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body }));
    return { status: response.status, json: await response.json() };
  };
  try {
    await test(ep, post);
  } finally {
    await ep.close();
  }
}

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('the nesting limit (docs/durability.md, "What ingest accepts")', () => {
  it('follows brackets across chunks, leaving those inside strings out', () => {
    const scan = new NestingScan(3);
    const chunks = ['{"a":"[[[[\\"[[[",', '"b":[[]],"c":[[', '[]]]}'].map((c) => Buffer.from(c));
    expect(scan.feed(chunks[0]!)).toBe(-1);
    expect(scan.feed(chunks[1]!)).toBe(-1);
    // The fourth level opens with the last chunk's first byte.
    expect(scan.feed(chunks[2]!)).toBe(chunks[0]!.length + chunks[1]!.length);
  });

  it('finds the same bracket as a byte-by-byte reading, wherever the chunks are cut (escapes and quotes across cuts)', () => {
    // The reference: one byte at a time, the escape of a string followed byte by byte.
    const reference = (text: Buffer, max: number) => {
      let depth = 0,
        inString = false,
        escaped = false;
      for (let i = 0; i < text.length; i++) {
        const c = String.fromCharCode(text[i]!);
        if (inString) {
          if (escaped) escaped = false;
          else if (c === '\\') escaped = true;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '[' || c === '{') {
          if (++depth > max) return i;
        } else if ((c === ']' || c === '}') && depth > 0) depth--;
      }
      return -1;
    };
    const prng = new Prng(7);
    const random = (n: number) => prng.int(n);
    const alphabet = ['"', '\\', '\\\\', '\\"', '[', ']', '{', '}', 'a', ',', ':', 'é'];
    for (let round = 0; round < 2000; round++) {
      const text = Buffer.from(Array.from({ length: 1 + random(60) }, () => alphabet[random(alphabet.length)]).join(''));
      const max = 1 + random(3);
      const scan = new NestingScan(max);
      let found = -1;
      for (let at = 0; at < text.length && found < 0; ) {
        const next = Math.min(text.length, at + 1 + random(6));
        found = scan.feed(text.subarray(at, next));
        at = next;
      }
      expect({ text: text.toString(), max, found }).toEqual({ text: text.toString(), max, found: reference(text, max) });
    }
  });

  it('a body nested deeper than 128 levels is refused with invalid_body; 128 levels are accepted', async () => {
    await withStorage(async (ep, post) => {
      // [ { "metadata": <nested> } ]: the body is 2 levels deeper than the metadata value.
      const body = (depth: number) => `[{"message":"m","project":"deep","metadata":{"x":${nested(depth - 3)}}}]`;
      expect(await post(body(MAX_NESTING))).toMatchObject({ status: 200 });
      const refused = await post(body(MAX_NESTING + 1));
      expect(refused).toMatchObject({ status: 400, json: { error: { code: 'invalid_body', message: expect.stringContaining('nested more than 128 levels') } } });
      expect((await ep.query('logs.all', { project: 'deep', project_tier: 'FREE' })).result).toHaveLength(1);
    });
  });

  it('an event nested deeper than 128 levels is refused by ep.ingest too, naming it', async () => {
    await withStorage(async (ep) => {
      let deep: unknown = 'bottom';
      for (let i = 0; i < MAX_NESTING; i++) deep = [deep];
      const error = await ep.ingest('cloudflare.logs.prod', [{ message: 'ok' }, { message: 'deep', metadata: deep }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidBodyError);
      expect(error).toMatchObject({ index: 1, message: 'Event 1 is nested more than 128 levels deep.' });
    });
  });

  it('12 KB of gzip holding 6,000,000 nested brackets is refused at once, without inflating the rest', async () => {
    await withStorage(async (_ep, post) => {
      const bomb = gzipSync(Buffer.from(nested(6_000_000)), { level: 9 });
      expect(bomb.length).toBeLessThan(16 * 1024);
      inflated.bytes = 0;
      const answer = await post(bomb, { 'Content-Encoding': 'gzip' });
      // Refused at the first bracket past the limit (the 129th, at byte 128), before any parse.
      expect(answer).toMatchObject({ status: 400, json: { error: { code: 'invalid_body', message: expect.stringContaining('(at byte 128)') } } });
      // Of its 12,000,000 bytes, only what gunzip inflates ahead of the reader (a few 16 KiB
      // chunks) was inflated: the rest never was, so never parsed either (the unchecked parse took seconds).
      expect(inflated.bytes).toBeGreaterThan(0);
      expect(inflated.bytes).toBeLessThan(1024 * 1024);
    });
  });
});

describe('an event longer than compaction fits, or than a query reads', () => {
  // The event's line as stored is its message and about 150 bytes more.
  const event = (bytes: number) => ({ message: 'x'.repeat(bytes - 200) });
  const storage = async (memoryLimit: string) => createEndpoints({ storage: { dataDir: tmp.path(`data-${++n}`) }, memoryLimit, now: () => new Date(NOW), cache: false });

  it("is refused by ep.ingest, naming it, past what the budget's compaction is sure to compact (4.36 MiB in 512 MiB)", async () => {
    const ep = await storage('512MiB');
    try {
      const largest = largestEventBytes(memoryBudget('512MiB').compaction);
      expect(largest).toBe(4_569_514);
      const error = await ep.ingest('cloudflare.logs.prod', [{ message: 'ok' }, event(largest + 1_000)]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidBodyError);
      expect(error).toMatchObject({ index: 1, message: expect.stringContaining(`an event may take at most ${largest} (what this server's compaction fits in its memory; a larger --memory-limit`) });
      await expect(ep.ingest('cloudflare.logs.prod', [event(largest - 1_000)])).resolves.toMatchObject({ ingested: 1 });
    } finally {
      await ep.close();
    }
  });

  it('is refused past 16 MiB as stored whatever the budget (the longest line the NDJSON reader is sure to take)', async () => {
    const ep = await storage('4GB');
    try {
      const error = await ep.ingest('cloudflare.logs.prod', [{ message: 'ok' }, { message: 'x'.repeat(16 * 1024 * 1024) }]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidBodyError);
      expect(error).toMatchObject({ index: 1, message: expect.stringContaining('an event may take at most 16777216 (the longest line the NDJSON reader is sure to take)') });
      await expect(ep.ingest('cloudflare.logs.prod', [event(8 * 1024 * 1024)])).resolves.toMatchObject({ ingested: 1 });
    } finally {
      await ep.close();
    }
  });
});

describe('a large body is parsed off the main thread', () => {
  const events = (count: number, project: string) =>
    Array.from({ length: count }, (_, i) => ({ id: `${project}-${i}`, message: `GET /${'x'.repeat(200)}`, project, timestamp: `2026-11-21T10:00:00.${String(i).padStart(6, '0')}Z` }));

  it('is stored exactly as a small one would be', async () => {
    await withStorage(async (ep, post) => {
      const big = JSON.stringify(events(600, 'big'));
      expect(big.length).toBeGreaterThan(OFF_THREAD_BYTES);
      expect(await post(big)).toMatchObject({ status: 200, json: { message: 'Logged!' } });
      expect(await post(JSON.stringify(events(3, 'small')))).toMatchObject({ status: 200 });
      const rows = (await ep.query('logs.all', { project: 'big', project_tier: 'FREE' })).result;
      expect(rows).toHaveLength(100);
      expect(rows[0]).toMatchObject({ id: 'big-599', timestamp: '2026-11-21T10:00:00.000599Z', event_message: `GET /${'x'.repeat(200)}` });
    });
  });

  it('the thread exits once idle, and the next large body starts another: nothing waits on it or is lost', async () => {
    parserIdleMs(0);
    try {
      await withStorage(async (ep, post) => {
        const big = JSON.stringify(events(600, 'idle'));
        expect(await post(big)).toMatchObject({ status: 200 });
        // Its memory goes with it once a sender stops; only the exit is awaited here, never a time.
        await vi.waitFor(() => expect(parserRunning()).toBe(false), { timeout: 60_000, interval: 20 });
        expect(await post(JSON.stringify(events(600, 'again')))).toMatchObject({ status: 200 });
        expect((await ep.query('logs.all', { project: 'again', project_tier: 'FREE' })).result).toHaveLength(100);
        expect((await ep.query('logs.all', { project: 'idle', project_tier: 'FREE' })).result).toHaveLength(100);
      });
    } finally {
      parserIdleMs(PARSER_IDLE_MS);
    }
  });

  it('its errors are the same: the bad event named, nothing kept', async () => {
    await withStorage(async (ep, post) => {
      const list = events(600, 'bad');
      (list[417] as Record<string, unknown>).timestamp = 'yesterday';
      expect(await post(JSON.stringify(list))).toMatchObject({ status: 400, json: { error: { code: 'invalid_body', index: 417 } } });
      expect(await post(`${JSON.stringify(list).slice(0, -1)},`)).toMatchObject({ status: 400, json: { error: { code: 'invalid_body' } } });
      expect((await ep.query('logs.all', { project: 'bad', project_tier: 'FREE' })).result).toEqual([]);
    });
  });
});

describe('nanosecond timestamps written as JSON numbers', () => {
  it("only an event's own top-level timestamp is kept as its digits; one deeper in the event is kept as sent", () => {
    const ns = '1795256102123456789';
    expect(quoteBigTimestamps(`{"timestamp":${ns},"metadata":{"timestamp":${ns}}}`)).toBe(`{"timestamp":"${ns}","metadata":{"timestamp":${ns}}}`);
    expect(quoteBigTimestamps(`[{"a":[{"timestamp":${ns}}],"timestamp": ${ns} }]`)).toBe(`[{"a":[{"timestamp":${ns}}],"timestamp": "${ns}" }]`);
    expect(quoteBigTimestamps(`{"batch":[{"x":{"timestamp":${ns}}},{"timestamp":-${ns}}]}`)).toBe(`{"batch":[{"x":{"timestamp":${ns}}},{"timestamp":"-${ns}"}]}`);
    expect(quoteBigTimestamps(`{"time\\u0073tamp":${ns}}\n{"s":"\\"timestamp\\":${ns}","timestamp":${ns}.5}`)).toBe(`{"time\\u0073tamp":"${ns}"}\n{"s":"\\"timestamp\\":${ns}","timestamp":${ns}.5}`);
  });

  it('a nested one reaches the query as the number sent', async () => {
    await withStorage(async (ep, post) => {
      const body = `[{"project":"ns","timestamp":1795256102123456789,"metadata":{"timestamp":1795256102123456789,"n":12345678901234567}}]`;
      expect(await post(body)).toMatchObject({ status: 200 });
      const [row] = (await ep.query('logs.all', { project: 'ns', project_tier: 'PAYG' })).result as Array<{ timestamp: string; metadata: any }>;
      expect(row!.timestamp).toBe('2026-11-21T10:15:02.123456Z');
      // Past 2^53: the library gives the digits sent as a bigint, the HTTP formats as a number (docs/ingest.md).
      expect(row!.metadata.timestamp).toBe(1795256102123456789n);
      expect(row!.metadata.n).toBe(12345678901234567n);
    });
  });
});
