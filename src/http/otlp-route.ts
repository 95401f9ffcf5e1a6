import { InvalidParameterError, LogEndpointsError, NotFoundError } from '../errors';
import { bodyDigest } from '../ingest/body-digest';
import { INGEST_FROM_BODY, type BodyIngest } from '../managed/ingestor';
import { otlpLogEvents, type OtlpLogEvent } from '../ingest/otlp-logs';
import { encodeLogsResponse, type LogsPartialSuccess } from '../ingest/otlp-proto';
import { admitIngest, requestedSource, withIngestBody, type IngestRoute } from './ingest-route';
import { parseQueryString } from './query-string';
import { send, sendJson } from './respond';
import { printable } from '../util/printable';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/**
 * `POST {base}/v1/logs`, OTLP/HTTP logs (docs/ingest.md, "OpenTelemetry (OTLP)"): an
 * `ExportLogsServiceRequest` in protobuf or JSON, plain or compressed, with the key, limits and
 * in-flight budget of Logflare's ingest route. Each log record is one event, stored through
 * `ep.ingest` in the source the request names (as Logflare's route takes it, or `x-source`), else
 * the one named by its resource's `service.name`, else `otlpDefaultSource`. Records with none are
 * refused: all of them is `400`, some of them a `partialSuccess` in the answer. Answers an
 * `ExportLogsServiceResponse` in the request's encoding once the events are durable.
 */
export const otlpLogsRoute: IngestRoute = async (context, request, search) => {
  const { ep, config, budget } = context;
  const query = parseQueryString(search);
  const storage = admitIngest(context, request, query);
  const encoding = encodingOf(request.header('content-type'));
  const named = requestedSource(query, request.header('x-source'));
  // An unknown source is told before the body is read, as on Logflare's route.
  if (named) storage.resolveSource(named);
  const known = storage.sources.map((n) => n.name);
  const rejected = await withIngestBody(request, config, budget, encoding, async (body) => {
    const records = otlpLogEvents(body, encoding);
    const groups = new Map<string, { events: object[]; positions: number[] }>();
    const unrouted: OtlpLogEvent[] = [];
    const byService = new Map<string, string | null>();
    for (const [position, record] of records.entries()) {
      const source = named ?? serviceSource(record.serviceName, byService, storage.resolveSource) ?? config.otlpDefaultSource;
      if (source === null) unrouted.push(record);
      else {
        const group = groups.get(source) ?? groups.set(source, { events: [], positions: [] }).get(source)!;
        group.events.push(record.event);
        group.positions.push(position);
      }
    }
    if (unrouted.length > 0 && groups.size === 0) throw noSource(known, unrouted);
    // One ingest per source: each all or nothing, each durable before the answer. A record
    // without an id gets one derived from the body and its position, and a body acknowledged
    // lately is acknowledged again (docs/ingest.md, "Retries and ids").
    const direct = (ep as Partial<BodyIngest>)[INGEST_FROM_BODY];
    const digest = direct ? bodyDigest(body) : null;
    for (const [source, { events, positions }] of groups) {
      if (direct) await direct.call(ep, source, events, { digest: digest!, positions });
      else await ep.ingest(source, events);
    }
    return unrouted;
  });
  const partialSuccess: LogsPartialSuccess | null = rejected.length === 0 ? null : { rejectedLogRecords: rejected.length, errorMessage: noSource(known, rejected).message };
  if (encoding === 'protobuf') return send(200, encodeLogsResponse(partialSuccess), { 'Content-Type': PROTOBUF });
  // OTLP/JSON spells an int64 as a decimal string.
  return sendJson(200, partialSuccess ? { partialSuccess: { rejectedLogRecords: String(partialSuccess.rejectedLogRecords), errorMessage: partialSuccess.errorMessage } } : {});
};

/** The body's encoding by `Content-Type`: OTLP/HTTP defines protobuf and JSON; others are 415. */
function encodingOf(contentType: string | null): 'protobuf' | 'json' {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === PROTOBUF) return 'protobuf';
  if (type === JSON_TYPE) return 'json';
  throw new LogEndpointsError('unsupported_media_type', 415, `Content-Type "${printable(contentType ?? '', 60)}" is not an OTLP/HTTP encoding; send ${PROTOBUF} or ${JSON_TYPE}.`);
}

/** The source whose ingest name is the record's `service.name` (any letter case), looked up once per name and request. */
function serviceSource(serviceName: string | null, seen: Map<string, string | null>, resolve: (ref: string) => string): string | null {
  if (serviceName === null || serviceName === '') return null;
  let source = seen.get(serviceName);
  if (source === undefined) {
    try {
      source = resolve(serviceName);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      source = null;
    }
    seen.set(serviceName, source);
  }
  return source;
}

function noSource(names: readonly string[], records: readonly OtlpLogEvent[]): InvalidParameterError {
  const services = [...new Set(records.map((r) => r.serviceName ?? '(none)'))].slice(0, 5).map((s) => printable(s, 64));
  return new InvalidParameterError(
    'source_name',
    `${records.length} log record(s) name no known source (service.name: ${services.join(', ')}). Name one with ?source_name=, ?source=<uuid> or an x-source header, ` +
      `set the resource's service.name to a source's ingest name, or start the server with a default source (--otlp-default-source). Known sources: ${names.join(', ')}.`,
  );
}
