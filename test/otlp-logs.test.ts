import { describe, expect, it } from 'vitest';
import { InvalidBodyError } from '../src/errors';
import { otlpLogEvents } from '../src/ingest/otlp-logs';
import { encodeLogsResponse } from '../src/ingest/otlp-proto';
import { serializeEvents } from '../src/ingest/serialize-events';

const NOW = '2026-11-21T12:00:00.000000Z';

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const one = (record: object, resource: object[] = []) => otlpLogEvents(json({ resourceLogs: [{ resource: { attributes: resource }, scopeLogs: [{ logRecords: [record] }] }] }), 'json')[0]!;

/**
 * A request whose record's body (or attribute `k`) is an AnyValue nested `depth` arrays deep, as
 * text: JSON.stringify's own recursion would not reach 5000.
 */
function nested(depth: number, where: 'body' | 'attribute' = 'body'): Uint8Array {
  const value = `${'{"arrayValue":{"values":['.repeat(depth)}{"stringValue":"leaf"}${']}}'.repeat(depth)}`;
  const record = where === 'body' ? `{"body":${value}}` : `{"attributes":[{"key":"k","value":${value}}]}`;
  return new TextEncoder().encode(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[${record}]}]}]}`);
}

describe('OTLP log records as events (docs/ingest.md, "OpenTelemetry (OTLP)")', () => {
  it('reads the .proto field names as well as the lowerCamelCase ones', () => {
    const { event, serviceName } = otlpLogEvents(
      json({
        resource_logs: [
          {
            resource: { attributes: [{ key: 'service.name', value: { string_value: 'api' } }] },
            scope_logs: [{ log_records: [{ time_unix_nano: '1000', severity_text: 'INFO', trace_id: 'AB', body: { string_value: 'hi' } }] }],
          },
        ],
      }),
      'json',
    )[0]!;
    expect(serviceName).toBe('api');
    expect(event).toMatchObject({ event_message: 'hi', timestamp: '1970-01-01T00:00:00.000001Z', metadata: { severity_text: 'INFO', trace_id: 'ab' } });
  });

  it('gives values JSON can hold: doubles it cannot as their names, __proto__ as a plain key, an empty value as null', () => {
    const { metadata } = one({
      attributes: [
        { key: 'nan', value: { doubleValue: 'NaN' } },
        { key: 'inf', value: { doubleValue: '-Infinity' } },
        { key: '__proto__', value: { stringValue: 'kept' } },
        { key: 'empty', value: {} },
      ],
    }).event as { metadata: { attributes: Record<string, unknown> } };
    expect(metadata.attributes.nan).toBe('NaN');
    expect(metadata.attributes.inf).toBe('-Infinity');
    expect(Object.getOwnPropertyDescriptor(metadata.attributes, '__proto__')?.value).toBe('kept');
    expect(Object.getPrototypeOf(metadata.attributes)).toBe(Object.prototype);
    expect(metadata.attributes.empty).toBeNull();
  });

  it('takes project from the resource and leaves timestamp to the arrival time when no time is known', () => {
    const { event } = one({ body: { stringValue: 'x' } }, [{ key: 'project', value: { stringValue: 'abc' } }]);
    expect(event.project).toBe('abc');
    expect(event).not.toHaveProperty('timestamp');
  });

  it('refuses values nested deeper than events may be, before the stack runs out', () => {
    // An attribute's value sits 3 levels into the event (event, metadata, attributes): 125 more fit
    // in 128, and ingest's own check then takes the event.
    const [deepest] = otlpLogEvents(nested(125, 'attribute'), 'json');
    expect(() => serializeEvents([deepest!.event], NOW)).not.toThrow();
    expect(() => otlpLogEvents(nested(126, 'attribute'), 'json')).toThrow(InvalidBodyError);
    expect(() => otlpLogEvents(nested(126), 'json')).toThrow(InvalidBodyError);
    expect(() => otlpLogEvents(nested(5000), 'json')).toThrow(/nested too deep: events may nest at most 128 levels/);
  });

  it('refuses a value of the wrong kind, naming where', () => {
    expect(() => one({ severityNumber: 'INFO' })).toThrow(/logRecords\[0\]\.severityNumber must be an integer/);
    expect(() => one({ attributes: [{ key: 1, value: {} }] })).toThrow(/attributes\[0\]\.key must be a string/);
    expect(() => one({ body: { boolValue: 'yes' } })).toThrow(/body\.boolValue must be a boolean/);
  });
});

/** Protobuf written by hand: a length-delimited field. */
const varint = (n: number): number[] => (n < 128 ? [n] : [(n & 127) | 128, ...varint(n >>> 7)]);
const field = (id: number, bytes: number[]): number[] => [(id << 3) | 2, ...varint(bytes.length), ...bytes];

/** An ExportLogsServiceRequest of one record whose body is `depth` arrays around a string. */
function protobufNested(depth: number): Uint8Array {
  let value = field(1, [...Buffer.from('leaf')]);
  for (let i = 0; i < depth; i++) value = field(5, field(1, value));
  return new Uint8Array(field(1, field(2, field(2, field(5, value)))));
}

describe('ExportLogsServiceRequest in protobuf', () => {
  it("decodes nested values, and refuses nesting past 100 messages (protobuf readers' limit) as a bad body", () => {
    const { event } = otlpLogEvents(protobufNested(3), 'protobuf')[0]!;
    expect((event.metadata as { body: unknown }).body).toEqual([[['leaf']]]);
    expect(() => otlpLogEvents(protobufNested(200), 'protobuf')).toThrow(InvalidBodyError);
    expect(() => otlpLogEvents(protobufNested(200), 'protobuf')).toThrow(/max depth exceeded/);
  });
});

describe('ExportLogsServiceResponse in protobuf', () => {
  it('is empty when every record was taken', () => {
    expect(encodeLogsResponse(null).length).toBe(0);
  });

  it('carries the rejected count and the message as OTLP numbers them (partial_success = 1: rejected_log_records = 1, error_message = 2)', () => {
    expect([...encodeLogsResponse({ rejectedLogRecords: 2, errorMessage: 'x' })]).toEqual([0x0a, 0x05, 0x08, 0x02, 0x12, 0x01, 0x78]);
  });
});
