import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { eventTimestampMicros } from '../time/event-timestamp';
import { formatIsoMicros } from '../time/iso';
import { DATADOG_SITES, type DrainConfig } from './drain-config';
import type { StoredDrain } from './drain-store';
import { encodeOtlpLogs } from './otlp-encode';
import { stringifyExactJson } from '../util/exact-json';

const gzip = promisify(gzipCallback);

/** One event on its way to a drain: as stored (its parsed line), and the Logflare name of its source. */
export interface OutgoingEvent {
  source: string;
  event: Readonly<Record<string, unknown>>;
}

/** One HTTP request to a drain's receiver. */
export interface DrainRequest {
  url: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** The HTTP version to send it with: a webhook's `http` (`http2`, Studio's choice), HTTP/1.1 for every other type. */
  http?: 'http1' | 'http2';
}

/**
 * The environment variable that replaces Datadog's intake URL (the region's) for every Datadog
 * drain: a proxy, or a receiver of tests on loopback.
 */
export const DATADOG_URL_VARIABLE = 'LOG_ENDPOINTS_DATADOG_URL';

/**
 * The request that carries a batch to a drain, in its type's wire format (Logflare's adaptors';
 * docs/supabase.md, "Log Drains"). `datadogUrl` replaces the region's intake when set.
 *
 * @example
 * const request = await drainRequest(drain, [{ source: 'gotrue.logs.prod', event: { id: 'a', timestamp: '2026-11-29T10:00:00Z', event_message: 'hi' } }]);
 */
export async function drainRequest(drain: Pick<StoredDrain, 'type' | 'config'>, batch: readonly OutgoingEvent[], datadogUrl?: string): Promise<DrainRequest> {
  const config = drain.config as DrainConfig & Record<string, unknown>;
  const headers: Record<string, string> = { ...((config.headers as Record<string, string> | undefined) ?? {}) };
  switch (drain.type) {
    case 'webhook': {
      const body = json(batch.map((e) => webhookEvent(e.event)));
      const request = await withBody(config.url as string, headers, 'application/json', body, config.gzip === true);
      return config.http === 'http2' ? { ...request, http: 'http2' } : request;
    }
    case 'datadog': {
      const site = DATADOG_SITES[config.region as string]!;
      headers['DD-API-KEY'] = config.api_key as string;
      const body = json(batch.map((e) => datadogEvent(e)));
      return withBody(datadogUrl || `https://http-intake.logs.${site}/api/v2/logs`, headers, 'application/json', body, true);
    }
    case 'loki': {
      if (config.username && config.password) headers.Authorization = `Basic ${Buffer.from(`${config.username as string}:${config.password as string}`).toString('base64')}`;
      return withBody(config.url as string, headers, 'application/json', json(lokiPush(batch)), true);
    }
    case 'otlp':
      return withBody(
        config.endpoint as string,
        headers,
        'application/x-protobuf',
        encodeOtlpLogs(batch.map((e) => ({ source: e.source, micros: microsOf(e.event), event: e.event }))),
        config.gzip === true,
      );
  }
}

/** An event as webhooks get it: `id`, `timestamp` in µs, `event_message`, then its other fields. */
export function webhookEvent(event: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { id, timestamp: _timestamp, event_message, ...rest } = event;
  return { id, timestamp: Number(microsOf(event)), event_message, ...rest };
}

function datadogEvent({ source, event }: OutgoingEvent): Record<string, unknown> {
  const message = typeof event.event_message === 'string' ? event.event_message : '';
  return { message: `${formatIsoMicros(microsOf(event))} ${message}`, ddsource: 'Supabase', service: source, data: webhookEvent(event) };
}

/** Loki's push API: one stream per source, each event `[ns, event_message, {its other fields flattened, as strings}]`. */
function lokiPush(batch: readonly OutgoingEvent[]): { streams: unknown[] } {
  const streams = new Map<string, unknown[][]>();
  for (const { source, event } of batch) {
    const { event_message, timestamp: _timestamp, ...rest } = event;
    const values = streams.get(source) ?? [];
    values.push([String(microsOf(event) * 1000n), typeof event_message === 'string' ? event_message : '', flattenToStrings(rest)]);
    streams.set(source, values);
  }
  return { streams: [...streams].map(([service, values]) => ({ stream: { source: 'supabase', service }, values })) };
}

/** Nested fields as dotted names (`metadata.request.method`), every value a string (JSON for arrays). */
export function flattenToStrings(value: Readonly<Record<string, unknown>>, prefix = '', out: Record<string, string> = {}): Record<string, string> {
  for (const [key, field] of Object.entries(value)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (field === null || field === undefined) continue;
    if (typeof field === 'object' && !Array.isArray(field)) flattenToStrings(field as Record<string, unknown>, name, out);
    else out[name] = typeof field === 'string' ? field : stringifyExactJson(field);
  }
  return out;
}

/** The event's instant in µs: its stored `timestamp` (ingest made sure it reads). */
export function microsOf(event: Readonly<Record<string, unknown>>): bigint {
  return eventTimestampMicros(event.timestamp) ?? 0n;
}

/** JSON with integers past 2^53 written as stored (events are read with `parseExactJson`). */
function json(value: unknown): Uint8Array {
  return Buffer.from(stringifyExactJson(value), 'utf8');
}

async function withBody(url: string, headers: Record<string, string>, type: string, body: Uint8Array, compress: boolean): Promise<DrainRequest> {
  headers['Content-Type'] = type;
  if (!compress) return { url, headers, body };
  headers['Content-Encoding'] = 'gzip';
  return { url, headers, body: await gzip(body) };
}
