import * as protobuf from 'protobufjs/light.js';

/**
 * The part of OTLP's logs messages (opentelemetry-proto: collector/logs/v1, logs/v1, common/v1,
 * resource/v1) a drain writes, field numbers as the .proto files declare them. The ingest side's
 * descriptor (src/ingest/otlp-proto.ts) only decodes requests; this one encodes what is sent.
 */
const OTLP_LOGS_OUT = {
  nested: {
    ExportLogsServiceRequest: { fields: { resourceLogs: { rule: 'repeated', type: 'ResourceLogs', id: 1 } } },
    ResourceLogs: { fields: { resource: { type: 'Resource', id: 1 }, scopeLogs: { rule: 'repeated', type: 'ScopeLogs', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeLogs: { fields: { scope: { type: 'InstrumentationScope', id: 1 }, logRecords: { rule: 'repeated', type: 'LogRecord', id: 2 } } },
    InstrumentationScope: { fields: { name: { type: 'string', id: 1 } } },
    LogRecord: {
      fields: {
        timeUnixNano: { type: 'fixed64', id: 1 },
        observedTimeUnixNano: { type: 'fixed64', id: 11 },
        body: { type: 'AnyValue', id: 5 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 6 },
      },
    },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue'] } },
      fields: { stringValue: { type: 'string', id: 1 }, boolValue: { type: 'bool', id: 2 }, intValue: { type: 'int64', id: 3 }, doubleValue: { type: 'double', id: 4 } },
    },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
  },
};

const Request = protobuf.Root.fromJSON(OTLP_LOGS_OUT).lookupType('ExportLogsServiceRequest');

/** One event for an OTLP drain. */
export interface OtlpOutgoing {
  /** The source's Logflare name: the resource's `service.name`. */
  source: string;
  micros: bigint;
  event: Readonly<Record<string, unknown>>;
}

/**
 * An `ExportLogsServiceRequest` in protobuf: one resource per source (`service.name` its name),
 * each event a log record with `time_unix_nano`, `event_message` as its body, and every other
 * field (nested ones dotted: `metadata.request.method`) as an attribute of its own type.
 *
 * @example
 * encodeOtlpLogs([{ source: 'gotrue.logs.prod', micros: 1795256102123456n, event: { id: 'a', event_message: 'hi' } }]);
 */
export function encodeOtlpLogs(batch: readonly OtlpOutgoing[]): Uint8Array {
  const bySource = new Map<string, unknown[]>();
  for (const { source, micros, event } of batch) {
    const { event_message, timestamp: _timestamp, ...rest } = event;
    const nanos = String(micros * 1000n);
    const records = bySource.get(source) ?? [];
    records.push({
      timeUnixNano: nanos,
      observedTimeUnixNano: nanos,
      body: { stringValue: typeof event_message === 'string' ? event_message : '' },
      attributes: attributesOf(rest),
    });
    bySource.set(source, records);
  }
  const resourceLogs = [...bySource].map(([source, logRecords]) => ({
    resource: { attributes: [{ key: 'service.name', value: { stringValue: source } }] },
    scopeLogs: [{ scope: { name: 'log-endpoints' }, logRecords }],
  }));
  return Request.encode(Request.fromObject({ resourceLogs })).finish();
}

function attributesOf(value: Readonly<Record<string, unknown>>, prefix = '', out: unknown[] = []): unknown[] {
  for (const [key, field] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (field === null || field === undefined) continue;
    if (typeof field === 'object' && !Array.isArray(field)) attributesOf(field as Record<string, unknown>, name, out);
    else out.push({ key: name, value: anyValue(field) });
  }
  return out;
}

function anyValue(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (typeof value === 'bigint') return { intValue: String(value) };
  return { stringValue: JSON.stringify(value) };
}
