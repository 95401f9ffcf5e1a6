import type { IncomingHttpHeaders } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { createEndpoints, InvalidOptionError } from '../src/index';
import { createHandler } from '../src/http';
import type { HandlerOptions } from '../src/http/handler-options';
import { toNodeListener } from '../src/node';
import { httpServerSettings } from '../src/cli/http-server-flags';
import { listen } from './support/http';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const KEY = 'query-key';
const INGEST_KEY = 'ship-key';
const tmp = tempDir('le-otlp-');
afterAll(() => tmp.cleanup());

/** 2026-11-21T11:00:00Z in whole seconds: the records' times are this plus nanoseconds. */
const ELEVEN = Date.parse('2026-11-21T11:00:00Z') / 1000;
const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const SPAN_ID = 'eee19b7ec3c1b174';

let n = 0;
/** Managed storage behind the node listener on loopback; `seen` holds the headers of each OTLP request that arrived. */
async function serve(handlerOptions: Partial<HandlerOptions> = {}) {
  const ep = await createEndpoints({ storage: { dataDir: tmp.path(`data-${++n}`) }, sandboxable: ['logs.all'], now: () => new Date(NOW) });
  const handler = toNodeListener(createHandler(ep, { apiKeys: [KEY], ingestKeys: [INGEST_KEY], onError: () => undefined, ...handlerOptions }));
  const seen: IncomingHttpHeaders[] = [];
  const server = await listen((req, res) => {
    if (req.url?.startsWith('/v1/logs')) seen.push(req.headers);
    handler(req, res);
  });
  return {
    url: server.url,
    seen,
    async close() {
      await server.close();
      await ep.close();
    },
  };
}
type Server = Awaited<ReturnType<typeof serve>>;

async function rows(server: Server, sql?: string): Promise<any[]> {
  const query = sql ? `&sql=${encodeURIComponent(sql)}` : '';
  const response = await fetch(`${server.url}/api/endpoints/logs.all?project=abc&project_tier=FREE${query}`, { headers: { 'X-API-KEY': KEY } });
  const json = (await response.json()) as any;
  expect(response.status, JSON.stringify(json)).toBe(200);
  return json.result;
}

async function post(server: Server, body: string | Uint8Array, headers: Record<string, string> = {}, path = '/v1/logs') {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'X-API-KEY': INGEST_KEY, 'Content-Type': 'application/json', ...headers }, body });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    // A protobuf answer.
  }
  return { status: response.status, type: response.headers.get('content-type'), bytes, json };
}

/** Sends records through the OpenTelemetry SDK with `exporter`, as an application would. */
async function emitWithSdk(exporter: LogRecordExporter, resource: Record<string, string>, emit: (logger: ReturnType<LoggerProvider['getLogger']>) => void) {
  const provider = new LoggerProvider({ resource: resourceFromAttributes(resource), processors: [new SimpleLogRecordProcessor({ exporter })] });
  emit(provider.getLogger('checkout', '1.2.3'));
  await provider.forceFlush();
  await provider.shutdown();
}

const spanContext = trace.setSpanContext(ROOT_CONTEXT, { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED });

/** A hand-written OTLP/JSON request, as docs/ingest.md shows it. */
const jsonRequest = (serviceName: string, records: object[]) => ({
  resourceLogs: [
    {
      resource: {
        attributes: [
          { key: 'service.name', value: { stringValue: serviceName } },
          { key: 'project', value: { stringValue: 'abc' } },
        ],
      },
      scopeLogs: [{ scope: { name: 'my-lib', version: '0.1.0' }, logRecords: records }],
    },
  ],
});

/** Protobuf written by hand (the SDK sends one resource a request): a length-delimited field. */
const varint = (n: number): number[] => (n < 128 ? [n] : [(n & 127) | 128, ...varint(n >>> 7)]);
const field = (id: number, bytes: number[]): number[] => [(id << 3) | 2, ...varint(bytes.length), ...bytes];
const utf8 = (text: string) => [...Buffer.from(text)];

/** An ExportLogsServiceRequest of resources, each with its service.name and project abc, and records of string bodies. */
function protobufRequest(resources: Array<[string, string[]]>): Uint8Array {
  const attribute = (key: string, value: string) => field(1, [...field(1, utf8(key)), ...field(2, field(1, utf8(value)))]);
  const bytes = resources.flatMap(([service, bodies]) => {
    const resource = field(1, [...attribute('service.name', service), ...attribute('project', 'abc')]);
    // LogRecord: time_unix_nano (fixed64, field 1) and body (field 5).
    const records = bodies.flatMap((body) => {
      const time = Buffer.alloc(8);
      time.writeBigUInt64LE(BigInt(ELEVEN) * 1_000_000_000n);
      return field(2, [0x09, ...time, ...field(5, field(1, utf8(body)))]);
    });
    return field(1, [...resource, ...field(2, records)]);
  });
  return new Uint8Array(bytes);
}

describe('OTLP/HTTP logs ingest (POST /v1/logs)', () => {
  let server: Server;
  beforeAll(async () => {
    server = await serve();
  });
  afterAll(() => server.close());

  it('stores what the SDK sends in protobuf with gzip, one event per record, read back by logs.all and a caller SQL', async () => {
    const exporter = new ProtoLogExporter({ url: `${server.url}/v1/logs`, headers: { 'x-api-key': INGEST_KEY }, compression: CompressionAlgorithm.GZIP });
    // service.name is an ingest name of the gateway log: no source in the URL needed.
    await emitWithSdk(exporter, { 'service.name': 'cloudflare.logs.prod', project: 'abc' }, (logger) => {
      logger.emit({
        timestamp: [ELEVEN, 123_456_789],
        severityNumber: SeverityNumber.WARN,
        severityText: 'WARN',
        body: 'payment declined',
        attributes: { 'http.status': 402, retry: false, ratio: 0.25, tags: ['a', 'b'], user: 'u-1' },
        context: spanContext,
      });
      logger.emit({ timestamp: [ELEVEN, 5_000], severityNumber: SeverityNumber.INFO, eventName: 'cart.checked', body: { items: 3, total: 12.5 } });
    });
    expect(server.seen.map((h) => [h['content-type'], h['content-encoding']])).toEqual([
      ['application/x-protobuf', 'gzip'],
      ['application/x-protobuf', 'gzip'],
    ]);
    const all = await rows(server);
    const declined = all.find((r) => r.event_message === 'payment declined');
    expect(declined.timestamp).toBe('2026-11-21T11:00:00.123456Z');
    expect(declined.metadata).toEqual({
      body: 'payment declined',
      attributes: { 'http.status': 402, retry: false, ratio: 0.25, tags: ['a', 'b'], user: 'u-1' },
      severity_text: 'WARN',
      severity_number: 13,
      trace_id: TRACE_ID,
      span_id: SPAN_ID,
      scope: { name: 'checkout', version: '1.2.3' },
      resource: expect.objectContaining({ 'service.name': 'cloudflare.logs.prod', project: 'abc' }),
    });
    // A body that is not a string: event_message is the event name, the body kept as a value.
    const checked = all.find((r) => r.event_message === 'cart.checked');
    expect(checked.timestamp).toBe('2026-11-21T11:00:00.000005Z');
    expect(checked.metadata).toMatchObject({ body: { items: 3, total: 12.5 }, event_name: 'cart.checked', severity_number: 9, trace_id: '', span_id: '' });
    const sql = `select event_message, metadata->>'$.trace_id' as trace_id, metadata->>'$.attributes.user' as user_id from edge_logs where metadata->>'$.severity_text' = 'WARN'`;
    expect(await rows(server, sql)).toEqual([{ event_message: 'payment declined', trace_id: TRACE_ID, user_id: 'u-1' }]);
  });

  it('stores what the SDK sends in OTLP/JSON, in the default source when service.name names none', async () => {
    const withDefault = await serve({ otlpDefaultSource: 'edgeLogs' });
    try {
      const exporter = new JsonLogExporter({ url: `${withDefault.url}/v1/logs`, headers: { Authorization: `Bearer ${INGEST_KEY}` } });
      await emitWithSdk(exporter, { 'service.name': 'checkout-service', project: 'abc' }, (logger) => {
        logger.emit({ timestamp: [ELEVEN, 42_000], severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: 'card expired', attributes: { attempt: 2 }, context: spanContext });
      });
      expect(withDefault.seen.map((h) => [h['content-type'], h['content-encoding']])).toEqual([['application/json', undefined]]);
      const [row] = await rows(withDefault);
      expect(row).toMatchObject({ event_message: 'card expired', timestamp: '2026-11-21T11:00:00.000042Z' });
      expect(row.metadata).toMatchObject({
        attributes: { attempt: 2 },
        severity_text: 'ERROR',
        severity_number: 17,
        trace_id: TRACE_ID,
        span_id: SPAN_ID,
        scope: { name: 'checkout', version: '1.2.3' },
      });
    } finally {
      await withDefault.close();
    }
  });

  it('takes hand-written OTLP/JSON, plain and gzip, the source from x-source, and answers an empty ExportLogsServiceResponse', async () => {
    const record = (message: string, over: object = {}) => ({
      timeUnixNano: String(BigInt(ELEVEN) * 1_000_000_000n + 7_000n),
      severityNumber: 9,
      severityText: 'INFO',
      traceId: TRACE_ID.toUpperCase(),
      spanId: SPAN_ID.toUpperCase(),
      body: { stringValue: message },
      attributes: [
        { key: 'big', value: { intValue: '9007199254740993' } },
        { key: 'raw', value: { bytesValue: 'AQID' } },
        { key: 'nested', value: { kvlistValue: { values: [{ key: 'k', value: { arrayValue: { values: [{ intValue: 1 }, { doubleValue: 1.5 }] } } }] } } },
      ],
      ...over,
    });
    const plain = await post(server, JSON.stringify(jsonRequest('unknown-service', [record('hand plain')])), { 'x-source': 'cloudflare.logs.prod' });
    expect(plain).toMatchObject({ status: 200, json: {} });
    expect(plain.type).toMatch(/^application\/json/);
    // time 0 is unknown: the observed time stands in.
    const observed = record('hand gzip', { timeUnixNano: '0', observedTimeUnixNano: String(BigInt(ELEVEN) * 1_000_000_000n + 9_000n) });
    const zipped = await post(server, gzipSync(JSON.stringify(jsonRequest('unknown-service', [observed]))), { 'Content-Encoding': 'gzip' }, '/v1/logs?source_name=cloudflare.logs.prod');
    expect(zipped).toMatchObject({ status: 200, json: {} });
    const all = await rows(server);
    const byMessage = Object.fromEntries(all.map((r) => [r.event_message, r]));
    expect(byMessage['hand plain'].timestamp).toBe('2026-11-21T11:00:00.000007Z');
    expect(byMessage['hand gzip'].timestamp).toBe('2026-11-21T11:00:00.000009Z');
    expect(byMessage['hand plain'].metadata).toMatchObject({
      trace_id: TRACE_ID,
      span_id: SPAN_ID,
      scope: { name: 'my-lib', version: '0.1.0' },
      resource: { 'service.name': 'unknown-service', project: 'abc' },
      attributes: { raw: 'AQID', nested: { k: [1, 1.5] } },
    });
    // An int64 past 2^53 keeps its digits (JSON.parse above rounds it; the answer's text has them).
    const text = await (await fetch(`${server.url}/api/endpoints/logs.all?project=abc&project_tier=FREE`, { headers: { 'X-API-KEY': KEY } })).text();
    expect(text).toContain('"big":9007199254740993');
  });

  it('answers a protobuf request in protobuf: an empty ExportLogsServiceResponse when all is stored', async () => {
    // The smallest protobuf request: no resource logs at all (zero bytes).
    const answer = await post(server, new Uint8Array(0), { 'Content-Type': 'application/x-protobuf' });
    expect(answer).toMatchObject({ status: 200, type: 'application/x-protobuf' });
    expect(answer.bytes.length).toBe(0);
  });

  it('stores the records it can route and reports the others as a partial success', async () => {
    const before = (await rows(server)).length;
    const body = {
      resourceLogs: [...jsonRequest('cloudflare.logs.prod', [{ body: { stringValue: 'routed' } }]).resourceLogs, ...jsonRequest('nobody', [{}, {}]).resourceLogs],
    };
    const answer = await post(server, JSON.stringify(body));
    expect(answer.status).toBe(200);
    expect(answer.json.partialSuccess.rejectedLogRecords).toBe('2');
    expect(answer.json.partialSuccess.errorMessage).toContain('nobody');
    expect(answer.json.partialSuccess.errorMessage).toContain('cloudflare.logs.prod');
    expect((await rows(server)).length).toBe(before + 1);
  });

  it('refuses bad requests and stores nothing from them', async () => {
    const before = (await rows(server)).length;
    const good = JSON.stringify(jsonRequest('cloudflare.logs.prod', [{ body: { stringValue: 'never stored' } }]));
    const noKey = await fetch(`${server.url}/v1/logs`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: good });
    expect(noKey.status).toBe(401);
    const wrongKey = await post(server, good, { 'X-API-KEY': 'nope' });
    expect(wrongKey.status).toBe(401);
    const cases: Array<[string | Uint8Array, Record<string, string>]> = [
      ['{"resourceLogs": [', {}],
      ['{"resourceLogs": 5}', {}],
      ['[]', {}],
      [JSON.stringify(jsonRequest('cloudflare.logs.prod', [{ body: { stringValue: 'x' }, traceId: 'not hex' }])), {}],
      [JSON.stringify(jsonRequest('cloudflare.logs.prod', [{ body: { stringValue: 'x' }, timeUnixNano: 'soon' }])), {}],
      [new Uint8Array([0x0a, 0xff, 0xff, 0x01]), { 'Content-Type': 'application/x-protobuf' }],
      [Buffer.from('this is not protobuf at all'), { 'Content-Type': 'application/x-protobuf' }],
      [Buffer.from('not gzip'), { 'Content-Encoding': 'gzip' }],
    ];
    for (const [body, headers] of cases) {
      const answer = await post(server, body, headers);
      expect([answer.status, answer.json?.error?.code], String(body)).toEqual([400, 'invalid_body']);
    }
    const noSource = await post(server, JSON.stringify(jsonRequest('nobody', [{ body: { stringValue: 'lost' } }])));
    expect(noSource.status).toBe(400);
    expect(noSource.json.error).toMatchObject({ code: 'invalid_parameter', param: 'source_name' });
    expect(noSource.json.error.message).toContain('cloudflare.logs.prod');
    const unknown = await post(server, good, {}, '/v1/logs?source_name=nowhere');
    expect(unknown.status).toBe(404);
    const text = await post(server, good, { 'Content-Type': 'text/plain' });
    expect([text.status, text.json.error.code]).toEqual([415, 'unsupported_media_type']);
    const get = await fetch(`${server.url}/v1/logs`, { headers: { 'X-API-KEY': INGEST_KEY } });
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await rows(server)).length).toBe(before);
  });

  it('keeps the ingest limits: a body past maxBodyBytes is 413, past the in-flight budget 503', async () => {
    const big = JSON.stringify(jsonRequest('cloudflare.logs.prod', [{ body: { stringValue: 'x'.repeat(500) } }]));
    const small = await serve({ ingest: { maxBodyBytes: 200 } });
    const tight = await serve({ ingest: { maxBytesInFlight: 200 } });
    try {
      const answer = await post(small, big);
      expect([answer.status, answer.json.error.code]).toEqual([413, 'payload_too_large']);
      expect(await rows(small)).toEqual([]);
      const busy = await post(tight, big);
      expect([busy.status, busy.json.error.code]).toEqual([503, 'overloaded']);
      expect(await rows(tight)).toEqual([]);
    } finally {
      await small.close();
      await tight.close();
    }
  });

  it('answers a protobuf request whose records partly name no source with a protobuf partialSuccess, and one where none does with 400', async () => {
    const before = (await rows(server)).length;
    const both = protobufRequest([
      ['cloudflare.logs.prod', ['routed in protobuf']],
      ['nobody', ['lost 1', 'lost 2']],
    ]);
    const answer = await post(server, both, { 'Content-Type': 'application/x-protobuf' });
    expect(answer).toMatchObject({ status: 200, type: 'application/x-protobuf' });
    // partial_success (1) { rejected_log_records (1) = 2, error_message (2) = "..." }
    expect([...answer.bytes.subarray(0, 1)]).toEqual([0x0a]);
    expect([...answer.bytes.subarray(answer.bytes[1]! < 128 ? 2 : 3).subarray(0, 2)]).toEqual([0x08, 0x02]);
    expect(Buffer.from(answer.bytes).toString('latin1')).toContain('nobody');
    const all = await rows(server);
    expect(all.length).toBe(before + 1);
    expect(all.find((r) => r.event_message === 'routed in protobuf').metadata.resource['service.name']).toBe('cloudflare.logs.prod');
    const none = await post(server, protobufRequest([['nobody', ['lost']]]), { 'Content-Type': 'application/x-protobuf' });
    expect([none.status, none.json.error.code]).toEqual([400, 'invalid_parameter']);
    expect((await rows(server)).length).toBe(before + 1);
  });

  it('refuses a default source that names none, when the handler is made; serve takes it as --otlp-default-source', async () => {
    const ep = await createEndpoints({ storage: { dataDir: tmp.path('data-default') }, now: () => new Date(NOW) });
    try {
      expect(() => createHandler(ep, { apiKeys: [KEY], otlpDefaultSource: 'nowhere' })).toThrow(InvalidOptionError);
    } finally {
      await ep.close();
    }
    const settings = httpServerSettings('serve', { 'no-auth': true, 'otlp-default-source': 'deno-relay-logs' }, {});
    expect(settings.otlpDefaultSource).toBe('deno-relay-logs');
  });
});
