import { InvalidParameterError } from '../errors';

/** The drain types events are forwarded to (docs/supabase.md, "Log Drains"). */
export const DRAIN_TYPES = ['webhook', 'datadog', 'loki', 'otlp'] as const;

/** One of `DRAIN_TYPES`. */
export type DrainType = (typeof DRAIN_TYPES)[number];

/**
 * Datadog's regions as Studio's form names them, each to its site: the intake is
 * `https://http-intake.logs.<site>/api/v2/logs`.
 */
export const DATADOG_SITES: Readonly<Record<string, string>> = Object.freeze({
  AP1: 'ap1.datadoghq.com',
  AP2: 'ap2.datadoghq.com',
  EU: 'datadoghq.eu',
  US1: 'datadoghq.com',
  'US1-FED': 'ddog-gov.com',
  US3: 'us3.datadoghq.com',
  US5: 'us5.datadoghq.com',
});

/** What a secret reads as in every answer (as Logflare shows it); sent back in a PUT, it keeps the stored one. */
export const REDACTED = 'REDACTED';

/** Headers a drain sends with each request (names as given). */
export type DrainHeaders = Readonly<Record<string, string>>;

/** A drain's `config`, by type, as Studio's form sends it. */
export type DrainConfig =
  | { url: string; http: 'http1' | 'http2'; gzip: boolean; headers: DrainHeaders }
  | { api_key: string; region: string }
  | { url: string; username: string; password: string; headers: DrainHeaders }
  | { endpoint: string; protocol: 'http/protobuf'; gzip: boolean; headers: DrainHeaders };

/** Types Studio lists that are not forwarded to here: refused by name. */
const KNOWN_ELSEWHERE = new Set(['s3', 'sentry', 'axiom', 'last9', 'syslog', 'bigquery', 'postgres', 'clickhouse', 'elastic', 'incidentio']);

/** A drain's type, checked: the four supported ones, others refused naming them. */
export function checkDrainType(value: unknown): DrainType {
  if (typeof value === 'string' && (DRAIN_TYPES as readonly string[]).includes(value)) return value as DrainType;
  const what = typeof value === 'string' ? `"${value.slice(0, 40)}"` : 'missing';
  const why = typeof value === 'string' && KNOWN_ELSEWHERE.has(value) ? ' is not forwarded to by this server' : ' is not a drain type';
  throw new InvalidParameterError('type', `The type ${what}${why}; the supported types are ${DRAIN_TYPES.join(', ')}.`);
}

/**
 * A drain's `config` checked for its type and normalised (defaults filled, unknown keys left
 * out); `stored` is the config it replaces, whose secrets a `"REDACTED"` value keeps. Throws
 * `InvalidParameterError` (400) naming the field.
 *
 * @example
 * checkDrainConfig('datadog', { api_key: 'k', region: 'EU' }); // { api_key: 'k', region: 'EU' }
 */
export function checkDrainConfig(type: DrainType, value: unknown, stored?: DrainConfig): DrainConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidParameterError('config', `The config of a ${type} drain must be an object.`);
  }
  const config = value as Record<string, unknown>;
  const old = (stored ?? {}) as Record<string, unknown>;
  const headers = () => checkHeaders(config.headers, old.headers as DrainHeaders | undefined);
  switch (type) {
    case 'webhook':
      return {
        url: checkUrl(config.url, 'config.url'),
        http: oneOf(config.http, 'config.http', ['http1', 'http2'], 'http1'),
        gzip: flag(config.gzip, 'config.gzip'),
        headers: headers(),
      };
    case 'datadog': {
      const region = oneOf(config.region, 'config.region', Object.keys(DATADOG_SITES), null);
      return { api_key: secret(config.api_key, old.api_key, 'config.api_key', true), region };
    }
    case 'loki':
      return {
        url: checkUrl(config.url, 'config.url'),
        username: text(config.username, 'config.username'),
        password: secret(config.password, old.password, 'config.password', false),
        headers: headers(),
      };
    case 'otlp':
      return {
        endpoint: checkUrl(config.endpoint, 'config.endpoint'),
        protocol: oneOf(config.protocol, 'config.protocol', ['http/protobuf'], 'http/protobuf'),
        gzip: flag(config.gzip, 'config.gzip'),
        headers: headers(),
      };
  }
}

/** The config as answers show it: the API key, the password and every header value `"REDACTED"`. */
export function redactedConfig(config: DrainConfig): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  if ('api_key' in config && config.api_key) out.api_key = REDACTED;
  if ('password' in config && config.password) out.password = REDACTED;
  if ('headers' in config) out.headers = Object.fromEntries(Object.keys(config.headers).map((name) => [name, REDACTED]));
  return out;
}

function checkUrl(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidParameterError(field, `${field} is required: the http:// or https:// URL events are sent to.`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new InvalidParameterError(field, `${field} "${value.slice(0, 200)}" is not a URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidParameterError(field, `${field} must be an http:// or https:// URL.`);
  return url.href;
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[], fallback: T | null): T {
  if ((value === undefined || value === null || value === '') && fallback !== null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new InvalidParameterError(field, `${field} must be one of ${allowed.join(', ')}.`);
}

function flag(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new InvalidParameterError(field, `${field} must be true or false.`);
  return value;
}

function text(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new InvalidParameterError(field, `${field} must be a string.`);
  return value;
}

/** A secret: `"REDACTED"` (what answers show) keeps the stored one. */
function secret(value: unknown, stored: unknown, field: string, required: boolean): string {
  const given = value === REDACTED && typeof stored === 'string' ? stored : text(value, field);
  if (required && given === '') throw new InvalidParameterError(field, `${field} is required.`);
  return given;
}

/**
 * Header names and string values, merged into the stored ones: Studio's form shows the stored
 * values as `"REDACTED"` and leaves those out of its PUT, so a header not sent (or sent as
 * `"REDACTED"`) keeps its stored value, and one sent with an empty value is removed.
 */
function checkHeaders(value: unknown, stored: DrainHeaders | undefined): DrainHeaders {
  if (value === undefined || value === null) return stored ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidParameterError('config.headers', 'config.headers must be an object of header names and values.');
  const out: Record<string, string> = { ...stored };
  for (const [name, header] of Object.entries(value)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new InvalidParameterError('config.headers', `The header name "${name.slice(0, 60)}" is not a valid HTTP header name.`);
    if (typeof header !== 'string' || /[\r\n\0]/.test(header)) throw new InvalidParameterError('config.headers', `The header "${name}" needs a value of one line of text.`);
    if (header === '') delete out[name];
    else if (header !== REDACTED || stored?.[name] === undefined) out[name] = header;
  }
  return out;
}
