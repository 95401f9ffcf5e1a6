import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoints, DataDirLockedError, InvalidBodyError, LogEndpointsError, NotFoundError, type Endpoints } from '../src/index';
import { parseEvents } from '../src/ingest/parse-body';
import { readBody } from '../src/ingest/read-body';
import { eventTimestampMicros as timestampMicros } from '../src/time/event-timestamp';
import { LOGFLARE_SOURCE_NAMES } from '../src/ingest/source-names';
import { walDir } from '../src/managed/wal/wal-set';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const tmp = tempDir('le-ingest-');
afterAll(() => tmp.cleanup());

let n = 0;
async function managed(extra: { sourceNames?: Record<string, 'edgeLogs' | 'functionEdgeLogs'> } = {}) {
  const dataDir = tmp.path(`data-${++n}`);
  const ep = await createEndpoints({ storage: { dataDir, ...extra }, now: () => new Date(NOW) });
  return { ep, dataDir };
}

/** The events stored in a source's WAL, commit markers left out. */
function stored(dataDir: string, source: 'edgeLogs' | 'functionEdgeLogs'): Record<string, unknown>[] {
  const dir = walDir(dataDir, source);
  return readdirSync(dir)
    .sort()
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n'))
    .filter((l) => l !== '' && !l.startsWith('{"_wal_commit"'))
    .map((l) => JSON.parse(l));
}

const edge = (over: Record<string, unknown> = {}) => ({
  message: 'GET | 200 | https://abc.supabase.co/rest/v1/todos',
  project: 'abc',
  timestamp: '2026-11-21T11:00:00.000000Z',
  metadata: { request: { method: 'GET', path: '/rest/v1/todos', url: 'https://abc.supabase.co/rest/v1/todos' } },
  ...over,
});

describe('ep.ingest', () => {
  it('resolves once the events are stored, and the next query reads them', async () => {
    const { ep } = await managed();
    expect(await ep.ingest('cloudflare.logs.prod', [edge({ id: 'a' }), edge({ id: 'b', timestamp: '2026-11-21T11:30:00Z' })])).toEqual({ ingested: 2 });
    const rows = await ep.logsAll({ project: 'abc', project_tier: 'FREE' });
    expect(rows.map((r) => r.id)).toEqual(['b', 'a']);
    expect(rows[0]!.event_message).toBe('GET | 200 | https://abc.supabase.co/rest/v1/todos');
    expect(await ep.usageApiCounts({ project: 'abc', interval: 'daily' })).toEqual([
      { timestamp: '2026-11-21T00:00:00.000000Z', total_rest_requests: 2, total_storage_requests: 0, total_auth_requests: 0, total_realtime_requests: 0 },
    ]);
    await ep.close();
  });

  it('takes a Logflare name, its fixed UUID (any case), the internal name or a configured name', async () => {
    const { ep, dataDir } = await managed({ sourceNames: { 'my-gateway': 'edgeLogs' } });
    const fn = { message: 'POST | 200', timestamp: '2026-11-21T11:00:00Z', metadata: { project_ref: 'abc', function_id: 'f1', execution_time_ms: 10, response: { status_code: 200 } } };
    await ep.ingest('deno-relay-logs', [fn]);
    await ep.ingest(LOGFLARE_SOURCE_NAMES[1]!.id!.toUpperCase(), [fn]);
    await ep.ingest('functionEdgeLogs', [fn]);
    await ep.ingest('my-gateway', [edge()]);
    await ep.ingest(LOGFLARE_SOURCE_NAMES[0]!.id!, [edge()]);
    expect(stored(dataDir, 'functionEdgeLogs')).toHaveLength(3);
    expect(stored(dataDir, 'edgeLogs')).toHaveLength(2);
    const [stats] = await ep.functionsInvocationStats({ project: 'abc', interval: '1day' });
    expect(stats!.count).toBe(3);
    expect(ep.storage!.sources.map((s) => s.name)).toEqual(['cloudflare.logs.prod', 'deno-relay-logs', 'my-gateway']);
    await ep.close();
  });

  it('an unknown source is not_found, listing the known names', async () => {
    const { ep } = await managed();
    const error = await ep.ingest('postgres.logs', [edge()]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toContain('cloudflare.logs.prod (49d2db0a-0317-43a6-9cd4-0b1425da96f0), deno-relay-logs (25810149-e19d-4b24-a57a-0e886add2d74)');
    await ep.close();
  });

  it('normalises: message becomes event_message, an id and the arrival time are added, everything else is kept as sent', async () => {
    const { ep, dataDir } = await managed();
    await ep.ingest('cloudflare.logs.prod', [
      { message: 'from message', event_message: 'overridden', extra: { deep: [1, 'two', null], ünï: '✓' }, project: 'abc' },
      JSON.parse('{"event_message":"kept","id":"my-id","timestamp":1795256102123,"__proto__":"a field"}'),
      { id: null, timestamp: null, level: 'info' },
    ]);
    const [a, b, c] = stored(dataDir, 'edgeLogs');
    expect(a).toEqual({ id: expect.stringMatching(UUID), timestamp: '2026-11-21T12:00:00.000000Z', event_message: 'from message', extra: { deep: [1, 'two', null], ünï: '✓' }, project: 'abc' });
    expect(b).toEqual(JSON.parse('{"id":"my-id","timestamp":1795256102123,"event_message":"kept","__proto__":"a field"}'));
    expect(c).toEqual({ id: expect.stringMatching(UUID), timestamp: '2026-11-21T12:00:00.000000Z', level: 'info' });
    expect(a!.id).not.toBe(c!.id);
    await ep.close();
  });

  it('a Date timestamp is kept as its ISO text', async () => {
    const { ep, dataDir } = await managed();
    await ep.ingest('edgeLogs', [{ timestamp: new Date('2026-11-21T10:00:00.5Z') }]);
    expect(stored(dataDir, 'edgeLogs')[0]!.timestamp).toBe('2026-11-21T10:00:00.500Z');
    await ep.close();
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['a string', 'hello', /Event 2 is not a JSON object \(it is a string\)/],
    ['null', null, /Event 2 is not a JSON object \(it is null\)/],
    ['an array', [1], /Event 2 is not a JSON object \(it is an array\)/],
    ['an unparseable timestamp', { timestamp: 'yesterday' }, /Event 2: "timestamp" "yesterday" is not an ISO 8601 time/],
    ['an impossible date', { timestamp: '2026-02-30T00:00:00Z' }, /"timestamp" "2026-02-30T00:00:00Z"/],
    ['a timestamp of another type', { timestamp: true }, /"timestamp" \(a boolean\)/],
    ['a timestamp out of range', { timestamp: 1e30 }, /"timestamp" 1e\+30/],
    ['a message that is not a string', { message: { text: 'x' } }, /Event 2: "message" must be a string, not an object/],
    ['an event_message that is not a string', { event_message: 42 }, /"event_message" must be a string, not a number/],
    ['an id that is not a string', { id: 7 }, /Event 2: "id" must be a non-empty string, not a number/],
    ['an empty id', { id: '' }, /"id" must be a non-empty string/],
    ['the reserved commit field', { _wal_commit: { seq: 1 } }, /"_wal_commit", which is reserved/],
    // (A bigint is written as its digits: docs/ingest.md.)
    [
      'a value JSON cannot hold',
      (() => {
        const cycle: Record<string, unknown> = { message: 'x' };
        cycle.self = cycle;
        return cycle;
      })(),
      /Event 2 cannot be written as JSON/,
    ],
  ];
  for (const [name, event, message] of bad) {
    it(`refuses the whole batch for ${name}, naming the event's index, and keeps nothing`, async () => {
      const { ep, dataDir } = await managed();
      const error = await ep.ingest('cloudflare.logs.prod', [edge(), edge(), event as object, edge()]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidBodyError);
      expect(error).toMatchObject({ code: 'invalid_body', status: 400, index: 2 });
      expect((error as Error).message).toMatch(message);
      expect(stored(dataDir, 'edgeLogs')).toEqual([]);
      await ep.close();
    });
  }

  it('more than 100,000 events in one call is payload_too_large', async () => {
    const { ep } = await managed();
    const events = Array.from({ length: 100_001 }, () => ({}));
    await expect(ep.ingest('edgeLogs', events)).rejects.toMatchObject({ code: 'payload_too_large', status: 413 });
    await ep.close();
  });

  it('events survive a restart on the same data dir; a second instance on it is refused while the first runs', async () => {
    const { ep, dataDir } = await managed();
    await ep.ingest('cloudflare.logs.prod', [edge({ id: 'durable' })]);
    const refused = await createEndpoints({ storage: { dataDir } }).catch((e: unknown) => e);
    // In the error family: a stable code and status, the lock's own refusal as cause, the message as before.
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect(refused).toBeInstanceOf(LogEndpointsError);
    expect(refused).toMatchObject({
      name: 'DataDirLockedError',
      code: 'data_dir_locked',
      status: 503,
      dataDir,
      message: expect.stringMatching(/^The data dir .+ is in use by this process\. Stop it first/),
    });
    expect((refused as Error).cause).toMatchObject({ name: 'LockedError', here: true });
    expect((refused as LogEndpointsError).toJSON()).toEqual({ code: 'data_dir_locked', status: 503, message: (refused as Error).message });
    await ep.close();
    const again = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
    expect((await again.logsAll({ project: 'abc', project_tier: 'FREE' })).map((r) => r.id)).toEqual(['durable']);
    await again.close();
  });

  it('close writes the events already accepted, then refuses more', async () => {
    const { ep } = await managed();
    const pending = ep.ingest('cloudflare.logs.prod', [edge()]);
    await ep.close();
    expect(await pending).toEqual({ ingested: 1 });
    await expect(ep.ingest('cloudflare.logs.prod', [edge()])).rejects.toMatchObject({ code: 'closed' });
  });

  it('file sources and managed storage are queried together', async () => {
    const dataDir = tmp.path(`data-${++n}`);
    const { writeLines, edgeEvent } = await import('./support/log-files');
    const file = writeLines(tmp.path(`files-${n}`, 'edge.ndjson'), [edgeEvent({ id: 'from-file', timestamp: '2026-11-21T10:00:00Z' })]);
    const ep = await createEndpoints({ sources: { edgeLogs: file }, storage: { dataDir }, now: () => new Date(NOW) });
    await ep.ingest('cloudflare.logs.prod', [edge({ id: 'ingested' })]);
    expect((await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).map((r) => r.id)).toEqual(['ingested', 'from-file']);
    await ep.close();
  });

  it('without storage, ingest is not_found; without sources and storage, createEndpoints refuses', async () => {
    const ep: Endpoints = await createEndpoints({ sources: {} });
    expect(ep.storage).toBeNull();
    await expect(ep.ingest('cloudflare.logs.prod', [edge()])).rejects.toMatchObject({ code: 'not_found', message: expect.stringMatching(/storage: \{ dataDir \}/) });
    await ep.close();
    await expect(createEndpoints({} as never)).rejects.toThrow(/sources is required: .*storage: \{ dataDir \}/);
  });

  it('a configured name must map to a source and not shadow a Logflare name', async () => {
    await expect(createEndpoints({ storage: { dataDir: tmp.path('bad-names'), sourceNames: { x: 'postgres' as never } } })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'storage.sourceNames["x"]',
    });
    await expect(createEndpoints({ storage: { dataDir: tmp.path('bad-names-2'), sourceNames: { 'deno-relay-logs': 'edgeLogs' } } })).rejects.toThrow(/already taken/);
  });
});

describe('timestamps (docs/semantics.md, "Timestamps")', () => {
  const at = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
  it.each([
    ['2026-11-21T10:15:02.123456Z', at('2026-11-21T10:15:02.123Z') + 456n],
    ['2026-11-21T12:15:02+02:00', at('2026-11-21T10:15:02Z')],
    ['2026-11-21T10:15:02', at('2026-11-21T10:15:02Z')],
    ['2026-11-21T10:15:02.123456789Z', at('2026-11-21T10:15:02.123Z') + 456n],
    [1795256102, 1795256102000000n],
    [1795256102.5, 1795256102500000n],
    [1795256102123, 1795256102123000n],
    [1795256102123456, 1795256102123456n],
    // Nanoseconds: as text (what ingest keeps of a 19-digit JSON number), exact and floored.
    ['1795256102123456789', 1795256102123456n],
    ['1795256102123456', 1795256102123456n],
    [' 1795256102 ', 1795256102000000n],
  ])('%s is %s µs', (value, micros) => {
    expect(timestampMicros(value)).toBe(micros);
  });
  it.each(['yesterday', '', '2026-13-01', '10:15', 'NaN', '1e400', '0x10', true, {}, [], Number.POSITIVE_INFINITY, -1e25])('%s is refused', (value) => {
    expect(timestampMicros(value)).toBeNull();
  });
  it('a nanosecond JSON number in a body keeps its exact microsecond (no double in between)', () => {
    const [event] = parseEvents(Buffer.from('{"timestamp": 1795256102123456999, "message": "m"}'), 'application/json') as Array<Record<string, unknown>>;
    expect(event!.timestamp).toBe('1795256102123456999');
    expect(timestampMicros(event!.timestamp)).toBe(1795256102123456n);
  });
});

describe('bodies (docs/ingest.md, "Requests")', () => {
  const body = (text: string) => Buffer.from(text);
  it('takes {"batch": [...]}, a JSON array, one event object, and NDJSON', () => {
    expect(parseEvents(body('{"batch":[{"a":1},{"a":2}]}'), 'application/json')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parseEvents(body('[{"a":1},{"a":2}]'), 'application/json')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parseEvents(body('{"a":1}'), null)).toEqual([{ a: 1 }]);
    expect(parseEvents(body('\uFEFF{"a":1}\r\n\r\n{"a":2}\n'), 'application/x-ndjson; charset=utf-8')).toEqual([{ a: 1 }, { a: 2 }]);
    // One JSON value per line without the content type (curl --data-binary @file.ndjson).
    expect(parseEvents(body('{"a":1}\n{"a":2}'), 'application/x-www-form-urlencoded')).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parseEvents(body('{"batch":[]}'), 'application/json')).toEqual([]);
  });

  it.each([
    ['', null, /The body is empty/],
    ['{"batch": {"a": 1}}', 'application/json', /"batch" must be an array of events/],
    ['{"a": 1', 'application/json', /The body is not valid JSON \(.+\)\. Send \{"batch"/],
    ['42', 'application/json', /The body is a JSON number, not events/],
    ['null', 'application/json', /The body is a JSON null/],
  ])('refuses %j with invalid_body', (text, type, message) => {
    expect(() => parseEvents(body(text), type)).toThrow(message);
  });

  it('a bad NDJSON line is named by its line number; its index counts events', () => {
    const error = (() => {
      try {
        parseEvents(body('{"a":1}\n\n{"a":2}\n{"a":\n'), 'application/x-ndjson');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidBodyError);
    expect(error).toMatchObject({ index: 2, message: expect.stringMatching(/^Line 4 of the NDJSON body is not valid JSON/) });
  });

  it('a body that is not UTF-8 is refused', () => {
    expect(() => parseEvents(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), 'application/json')).toThrow(/not valid UTF-8/);
    // A surrogate written as UTF-8 (CESU-8), an overlong '/', a sequence cut short: what a fatal decoder refuses.
    for (const bad of [
      [0xed, 0xa0, 0x80],
      [0xc0, 0xaf],
      [0xe2, 0x82],
    ]) {
      expect(() => parseEvents(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, ...bad, 0x22, 0x7d]), 'application/json')).toThrow(/not valid UTF-8/);
    }
  });

  it('reads only the bytes of the view it is given, its first BOM left out and any later one kept', () => {
    const whole = Buffer.from('xx\uFEFF[{"a":"\uFEFFé"}]yy');
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 2, whole.length - 4);
    expect(parseEvents(view, 'application/json')).toEqual([{ a: '\uFEFFé' }]);
  });

  it('one look for 16 digits in a row: integers past 2^53 kept exactly in a body, an array and NDJSON lines; a long digit run in a string alone changes nothing', () => {
    expect(parseEvents(body('{"batch":[{"n":9007199254740993}]}'), 'application/json')).toEqual([{ n: 9007199254740993n }]);
    expect(parseEvents(body('{"n":1}\n{"n":9007199254740993}\n'), 'application/x-ndjson')).toEqual([{ n: 1 }, { n: 9007199254740993n }]);
    expect(parseEvents(body('{"n":1}\n{"n":9007199254740993}'), null)).toEqual([{ n: 1 }, { n: 9007199254740993n }]);
    expect(parseEvents(body('[{"s":"12345678901234567890","n":2}]'), 'application/json')).toEqual([{ s: '12345678901234567890', n: 2 }]);
  });
});

describe('reading bodies', () => {
  const chunks = (data: Buffer, size = 1000) => Readable.from(Array.from({ length: Math.ceil(data.length / size) }, (_, i) => data.subarray(i * size, (i + 1) * size)));
  const events = Buffer.from(JSON.stringify({ batch: [{ a: 1 }] }));

  it('reads plain, gzip (also x-gzip) and deflate bodies', async () => {
    expect(await readBody(chunks(events), { contentEncoding: null, maxBytes: 1000 })).toEqual(events);
    expect(await readBody(chunks(gzipSync(events)), { contentEncoding: 'gzip', maxBytes: 1000 })).toEqual(events);
    expect(await readBody(chunks(gzipSync(events)), { contentEncoding: 'X-GZIP', maxBytes: 1000 })).toEqual(events);
    expect(await readBody(chunks(deflateSync(events)), { contentEncoding: 'deflate', maxBytes: 1000 })).toEqual(events);
    expect(await readBody(chunks(events), { contentEncoding: 'identity', maxBytes: 1000 })).toEqual(events);
  });

  it('past the limit is payload_too_large, plain or compressed', async () => {
    const big = Buffer.alloc(5000, 'a');
    await expect(readBody(chunks(big), { contentEncoding: null, maxBytes: 4999 })).rejects.toMatchObject({ code: 'payload_too_large', status: 413 });
    await expect(readBody(chunks(gzipSync(big)), { contentEncoding: 'gzip', maxBytes: 4999 })).rejects.toMatchObject({ code: 'payload_too_large' });
    expect(await readBody(chunks(gzipSync(big)), { contentEncoding: 'gzip', maxBytes: 5000 })).toHaveLength(5000);
  });

  it('a gzip bomb is inflated only up to the limit', async () => {
    // 256 MiB of zeros, about 256 KiB compressed.
    const gzip = createGzip();
    const compressed: Buffer[] = [];
    gzip.on('data', (c: Buffer) => compressed.push(c));
    const done = new Promise((resolve) => gzip.on('end', resolve));
    const zeros = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < 256; i++) gzip.write(zeros);
    gzip.end();
    await done;
    const bomb = Buffer.concat(compressed);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    let inflated = 0;
    const limit = 1024 * 1024;
    await expect(readBody(chunks(bomb, 16 * 1024), { contentEncoding: 'gzip', maxBytes: limit, onBytes: (b) => (inflated += b) })).rejects.toMatchObject({ code: 'payload_too_large' });
    expect(inflated).toBeLessThanOrEqual(limit);
  });

  it('an unknown encoding is 415, broken gzip is invalid_body', async () => {
    await expect(readBody(chunks(events), { contentEncoding: 'br', maxBytes: 1000 })).rejects.toMatchObject({ code: 'unsupported_media_type', status: 415 });
    await expect(readBody(chunks(events), { contentEncoding: 'gzip, br', maxBytes: 1000 })).rejects.toMatchObject({ status: 415 });
    await expect(readBody(chunks(Buffer.from('not gzip at all')), { contentEncoding: 'gzip', maxBytes: 1000 })).rejects.toMatchObject({
      code: 'invalid_body',
      message: expect.stringMatching(/not valid gzip data/),
    });
  });

  it('a caller can refuse bytes past its own budget (bytes in flight)', async () => {
    let used = 0;
    const take = (b: number) => {
      used += b;
      if (used > 1500) throw new Error('over budget');
    };
    await expect(readBody(chunks(Buffer.alloc(3000, 'a')), { contentEncoding: null, maxBytes: 10_000, onBytes: take })).rejects.toThrow('over budget');
  });
});
