import * as protobuf from 'protobufjs/light.js';
import { InvalidBodyError } from '../errors';

/**
 * The messages of OTLP's logs service (opentelemetry-proto: collector/logs/v1, logs/v1,
 * common/v1, resource/v1) as a protobufjs JSON descriptor: field numbers and types as the
 * .proto files declare them, names in lowerCamelCase as OTLP/JSON spells them, so a decoded
 * request has the shape of a JSON one. Built once, with no .proto file read at run time. Fields a
 * newer sender adds that are not here (entity refs, schema URLs, dropped counts) are skipped by
 * the decoder, as protobuf readers do.
 */
const OTLP_LOGS = {
  nested: {
    ExportLogsServiceRequest: { fields: { resourceLogs: { rule: 'repeated', type: 'ResourceLogs', id: 1 } } },
    ExportLogsServiceResponse: { fields: { partialSuccess: { type: 'ExportLogsPartialSuccess', id: 1 } } },
    ExportLogsPartialSuccess: { fields: { rejectedLogRecords: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } } },
    ResourceLogs: { fields: { resource: { type: 'Resource', id: 1 }, scopeLogs: { rule: 'repeated', type: 'ScopeLogs', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeLogs: { fields: { scope: { type: 'InstrumentationScope', id: 1 }, logRecords: { rule: 'repeated', type: 'LogRecord', id: 2 } } },
    InstrumentationScope: {
      fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 }, attributes: { rule: 'repeated', type: 'KeyValue', id: 3 } },
    },
    LogRecord: {
      fields: {
        timeUnixNano: { type: 'fixed64', id: 1 },
        observedTimeUnixNano: { type: 'fixed64', id: 11 },
        severityNumber: { type: 'int32', id: 2 },
        severityText: { type: 'string', id: 3 },
        body: { type: 'AnyValue', id: 5 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 6 },
        flags: { type: 'fixed32', id: 8 },
        traceId: { type: 'bytes', id: 9 },
        spanId: { type: 'bytes', id: 10 },
        eventName: { type: 'string', id: 12 },
      },
    },
    AnyValue: {
      oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
        arrayValue: { type: 'ArrayValue', id: 5 },
        kvlistValue: { type: 'KeyValueList', id: 6 },
        bytesValue: { type: 'bytes', id: 7 },
      },
    },
    ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
    KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
  },
};

const root = protobuf.Root.fromJSON(OTLP_LOGS);
const Request = root.lookupType('ExportLogsServiceRequest');
const Response = root.lookupType('ExportLogsServiceResponse');

/**
 * An `ExportLogsServiceRequest` in protobuf as a plain object shaped like its OTLP/JSON form,
 * except that 64-bit integers are decimal strings and bytes (`traceId`, `spanId`, `bytesValue`)
 * are `Uint8Array`s. Nesting past protobuf's usual limit of 100 messages is refused. Throws
 * `InvalidBodyError` when the bytes are not such a message.
 *
 * @example
 * decodeLogsRequest(body).resourceLogs?.[0]?.scopeLogs?.[0]?.logRecords?.length;
 */
export function decodeLogsRequest(body: Uint8Array): Record<string, unknown> & { resourceLogs?: unknown } {
  try {
    return Request.toObject(Request.decode(body), { longs: String, enums: Number });
  } catch (error) {
    throw new InvalidBodyError(`The body is not an OTLP ExportLogsServiceRequest in protobuf (${(error as Error).message}).`, { cause: error });
  }
}

/** What an `ExportLogsServiceResponse` carries: the records refused, and why (both absent when all were taken). */
export interface LogsPartialSuccess {
  rejectedLogRecords: number;
  errorMessage: string;
}

/**
 * An `ExportLogsServiceResponse` in protobuf; without `partialSuccess` it is empty (zero bytes),
 * which OTLP reads as every record accepted.
 *
 * @example
 * encodeLogsResponse({ rejectedLogRecords: 2, errorMessage: 'no source' });
 */
export function encodeLogsResponse(partialSuccess: LogsPartialSuccess | null): Uint8Array {
  return Response.encode(Response.fromObject(partialSuccess ? { partialSuccess } : {})).finish();
}

/**
 * An `ExportLogsServiceRequest` in protobuf from a plain object shaped like its OTLP/JSON form
 * (64-bit integers as decimal strings): what an OTLP log drain sends. One descriptor for both
 * directions, so what we send is what we read.
 *
 * @example
 * encodeLogsRequest({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1795256102123456000', body: { stringValue: 'hi' } }] }] }] });
 */
export function encodeLogsRequest(request: { resourceLogs: readonly unknown[] }): Uint8Array {
  return Request.encode(Request.fromObject(request)).finish();
}
