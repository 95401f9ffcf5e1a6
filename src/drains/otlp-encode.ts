import { encodeLogsRequest } from '../ingest/otlp-proto';

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
  return encodeLogsRequest({ resourceLogs });
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
