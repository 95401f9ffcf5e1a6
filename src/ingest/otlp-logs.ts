import { InvalidBodyError } from '../errors';
import { formatIsoMicros } from '../time/iso';
import { parseExactJson } from '../util/exact-json';
import { MAX_NESTING } from './json-nesting';
import { decodeLogsRequest } from './otlp-proto';

/** One OTLP log record as an event, with the `service.name` of its resource (the source it may go to). */
export interface OtlpLogEvent {
  serviceName: string | null;
  event: Record<string, unknown>;
}

/**
 * Brackets above an attribute's value in the stored event (the event, `metadata`, `attributes`):
 * a value's arrays and lists may nest MAX_NESTING less these deep, so every event of a request
 * that passes here passes ingest's own nesting check too (and none is refused after another is stored).
 */
const LEVELS_ABOVE_VALUES = 3;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The log records of an OTLP/HTTP logs body (`ExportLogsServiceRequest`, protobuf or JSON), one
 * event each, as docs/ingest.md ("OpenTelemetry (OTLP)") maps them: `event_message` the string
 * body (else the event name), `timestamp` the record's time (else its observed time) to the
 * microsecond, `project` the resource's `project` attribute, and the rest under `metadata`.
 * Throws `InvalidBodyError` when the body is not such a request; nothing is stored then.
 *
 * @example
 * otlpLogEvents(body, 'json')[0]?.event.metadata; // { body: 'hello', severity_text: 'INFO', ... }
 */
export function otlpLogEvents(body: Uint8Array, encoding: 'protobuf' | 'json'): OtlpLogEvent[] {
  const request = encoding === 'protobuf' ? decodeLogsRequest(body) : parseJson(body);
  const out: OtlpLogEvent[] = [];
  for (const [r, resourceLogs] of list(field(request, 'resourceLogs', 'resource_logs'), 'resourceLogs').entries()) {
    const where = `resourceLogs[${r}]`;
    const resource = attributes(field(object(field(resourceLogs, 'resource'), `${where}.resource`), 'attributes'), `${where}.resource.attributes`);
    const serviceName = typeof resource['service.name'] === 'string' ? resource['service.name'] : null;
    for (const [s, scopeLogs] of list(field(resourceLogs, 'scopeLogs', 'scope_logs'), `${where}.scopeLogs`).entries()) {
      const scopeAt = `${where}.scopeLogs[${s}]`;
      const scopeObject = object(field(scopeLogs, 'scope'), `${scopeAt}.scope`);
      const scope = { name: text(field(scopeObject, 'name'), `${scopeAt}.scope.name`), version: text(field(scopeObject, 'version'), `${scopeAt}.scope.version`) };
      for (const [l, record] of list(field(scopeLogs, 'logRecords', 'log_records'), `${scopeAt}.logRecords`).entries()) {
        const event = recordEvent(object(record, `${scopeAt}.logRecords[${l}]`), `${scopeAt}.logRecords[${l}]`, scope, resource);
        out.push({ serviceName, event });
      }
    }
  }
  return out;
}

function recordEvent(record: Record<string, unknown>, at: string, scope: { name: string; version: string }, resource: Record<string, unknown>): Record<string, unknown> {
  const body = anyValue(field(record, 'body'), `${at}.body`, 0);
  const eventName = text(field(record, 'eventName', 'event_name'), `${at}.eventName`);
  const severityNumber = integer(field(record, 'severityNumber', 'severity_number'), `${at}.severityNumber`);
  const severityText = text(field(record, 'severityText', 'severity_text'), `${at}.severityText`);
  const traceId = id(field(record, 'traceId', 'trace_id'), `${at}.traceId`);
  const spanId = id(field(record, 'spanId', 'span_id'), `${at}.spanId`);
  // 0 means unknown in OTLP: the observed time stands in, and without either the arrival time does.
  const nanos =
    nanoseconds(field(record, 'timeUnixNano', 'time_unix_nano'), `${at}.timeUnixNano`) || nanoseconds(field(record, 'observedTimeUnixNano', 'observed_time_unix_nano'), `${at}.observedTimeUnixNano`);
  const metadata: Record<string, unknown> = {
    body,
    attributes: attributes(field(record, 'attributes'), `${at}.attributes`),
    severity_text: severityText,
    severity_number: severityNumber,
    trace_id: traceId,
    span_id: spanId,
    scope,
    resource,
  };
  if (eventName !== '') metadata.event_name = eventName;
  const event: Record<string, unknown> = {};
  const message = typeof body === 'string' ? body : eventName;
  if (message !== '') event.event_message = message;
  if (nanos > 0n) event.timestamp = formatIsoMicros(nanos / 1000n);
  if (typeof resource.project === 'string') event.project = resource.project;
  event.metadata = metadata;
  return event;
}

/** A list of `KeyValue`s as an object (a repeated key: the last one). */
function attributes(value: unknown, at: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [i, kv] of list(value, at).entries()) {
    const pair = object(kv, `${at}[${i}]`);
    const key = text(field(pair, 'key'), `${at}[${i}].key`);
    set(out, key, anyValue(field(pair, 'value'), `${at}[${i}].value`, 0));
  }
  return out;
}

/**
 * An `AnyValue` as a JSON value: strings, booleans and doubles as such, integers as numbers (as
 * `bigint` past 2^53, kept to the digit as ingest keeps them), arrays, key-value lists as objects,
 * bytes as base64, an empty value as null. A double JSON cannot hold (NaN, ±Infinity) is its name.
 */
function anyValue(value: unknown, at: string, depth: number): unknown {
  if (value === undefined || value === null) return null;
  const v = object(value, at);
  const container = has(v, 'arrayValue', 'array_value') || has(v, 'kvlistValue', 'kvlist_value');
  if (container && LEVELS_ABOVE_VALUES + depth + 1 > MAX_NESTING) {
    throw new InvalidBodyError(`${at} is nested too deep: events may nest at most ${MAX_NESTING} levels (${MAX_NESTING - LEVELS_ABOVE_VALUES} of arrays and lists in a value).`);
  }
  if (has(v, 'stringValue', 'string_value')) return text(field(v, 'stringValue', 'string_value'), `${at}.stringValue`);
  if (has(v, 'boolValue', 'bool_value')) {
    const b = field(v, 'boolValue', 'bool_value');
    if (typeof b !== 'boolean') throw wrong(`${at}.boolValue`, 'a boolean', b);
    return b;
  }
  if (has(v, 'intValue', 'int_value')) {
    const n = int64(field(v, 'intValue', 'int_value'), `${at}.intValue`);
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  }
  if (has(v, 'doubleValue', 'double_value')) {
    const d = field(v, 'doubleValue', 'double_value');
    const n = typeof d === 'number' ? d : typeof d === 'string' && /^(NaN|-?Infinity)$/.test(d) ? Number(d) : null;
    if (n === null) throw wrong(`${at}.doubleValue`, 'a number', d);
    return Number.isFinite(n) ? n : String(n);
  }
  if (has(v, 'arrayValue', 'array_value')) {
    const values = list(field(object(field(v, 'arrayValue', 'array_value'), `${at}.arrayValue`), 'values'), `${at}.arrayValue.values`);
    return values.map((item, i) => anyValue(item, `${at}.arrayValue.values[${i}]`, depth + 1));
  }
  if (has(v, 'kvlistValue', 'kvlist_value')) {
    const out: Record<string, unknown> = {};
    const values = list(field(object(field(v, 'kvlistValue', 'kvlist_value'), `${at}.kvlistValue`), 'values'), `${at}.kvlistValue.values`);
    for (const [i, kv] of values.entries()) {
      const pair = object(kv, `${at}.kvlistValue.values[${i}]`);
      set(out, text(field(pair, 'key'), `${at}.kvlistValue.values[${i}].key`), anyValue(field(pair, 'value'), `${at}.kvlistValue.values[${i}].value`, depth + 1));
    }
    return out;
  }
  if (has(v, 'bytesValue', 'bytes_value')) {
    const bytes = field(v, 'bytesValue', 'bytes_value');
    if (bytes instanceof Uint8Array) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');
    if (typeof bytes !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(bytes)) throw wrong(`${at}.bytesValue`, 'base64 text', bytes);
    return bytes;
  }
  return null;
}

/** A trace or span id: bytes (protobuf) or hex text (OTLP/JSON), as lower-case hex; absent is ''. */
function id(value: unknown, at: string): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.length).toString('hex');
  if (typeof value !== 'string' || !/^(?:[0-9a-fA-F]{2})*$/.test(value)) throw wrong(at, 'hex text', value);
  return value.toLowerCase();
}

/** A fixed64 of nanoseconds since the epoch (decimal text or a number in OTLP/JSON); absent is 0. */
function nanoseconds(value: unknown, at: string): bigint {
  if (value === undefined || value === null) return 0n;
  const n = int64(value, at);
  if (n < 0n || n >= 2n ** 64n) throw wrong(at, 'nanoseconds since the epoch', value);
  return n;
}

function int64(value: unknown, at: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) return BigInt(value);
  throw wrong(at, 'an integer', value);
}

function integer(value: unknown, at: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw wrong(at, 'an integer', value);
}

function text(value: unknown, at: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw wrong(at, 'a string', value);
  return value;
}

function list(value: unknown, at: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw wrong(at, 'an array', value);
  return value;
}

function object(value: unknown, at: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value) || value instanceof Uint8Array) throw wrong(at, 'an object', value);
  return value as Record<string, unknown>;
}

/** A field by its OTLP/JSON name (lowerCamelCase), or by the .proto name, which JSON readers also accept. */
function field(from: unknown, name: string, protoName?: string): unknown {
  if (typeof from !== 'object' || from === null) return undefined;
  const o = from as Record<string, unknown>;
  if (Object.hasOwn(o, name)) return o[name];
  return protoName !== undefined && Object.hasOwn(o, protoName) ? o[protoName] : undefined;
}

function has(from: Record<string, unknown>, name: string, protoName: string): boolean {
  const value = field(from, name, protoName);
  return value !== undefined && value !== null;
}

/** A key as a field, `__proto__` included (an own field, never the prototype). */
function set(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

function wrong(at: string, expected: string, value: unknown): InvalidBodyError {
  const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
  return new InvalidBodyError(`OTLP logs: ${at} must be ${expected}, not ${kind === 'string' ? JSON.stringify(String(value).slice(0, 40)) : kind}.`);
}

function parseJson(body: Uint8Array): unknown {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch (error) {
    throw new InvalidBodyError('The body is not valid UTF-8.', { cause: error });
  }
  let value: unknown;
  try {
    value = parseExactJson(text);
  } catch (error) {
    throw new InvalidBodyError(`The body is not valid JSON (${(error as Error).message}); send an OTLP ExportLogsServiceRequest.`, { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidBodyError('The body must be a JSON object: an OTLP ExportLogsServiceRequest ({"resourceLogs": [...]}).');
  }
  return value;
}
