import { InvalidOptionError } from '../errors';
import type { DashboardOptions } from './serve-dashboard';
import type { Drains } from '../drains/open-drains';
import { MAX_BODY_BYTES } from '../ingest/read-body';

/** What the handler passes to `onError` with each error it answers with a 5xx status. */
export interface ErrorContext {
  requestId: string;
  method: string;
  /** The URL path, without the query string (parameter values can be sensitive). */
  path: string;
  /** The status the client got. */
  status: number;
}

/** Options of `createHandler`. */
export interface HandlerOptions {
  /**
   * Accepted API keys, sent as `X-API-KEY: <key>` or `Authorization: Bearer <key>`. Several keys
   * allow rotation. Required unless `auth` is `false`.
   */
  apiKeys?: readonly string[];
  /**
   * Keys that may only send events to the ingest routes (`POST /api/logs`, ...), like Logflare's
   * public ingest token: give them to log shippers. Query keys (`apiKeys`) may ingest too.
   */
  ingestKeys?: readonly string[];
  /** `false` serves the endpoints without any key. It has to be said explicitly. */
  auth?: false;
  /** A path prefix every route lives under, e.g. `/logs` (default: none). */
  basePath?: string;
  /** Cross-origin access for browsers; off when absent. */
  cors?: CorsOptions;
  /**
   * Longest accepted request URL in bytes (default 65536: Supabase Studio sends a caller's SQL in
   * the query string); longer ones get 414 `uri_too_long`. A node:http server of your own needs
   * `maxHeaderSize` above it (Node's default is 16 KiB): `serve` sets `MAX_HEADER_BYTES`.
   */
  maxUrlLength?: number;
  /** How long `GET /health` waits for the engine to answer before it reports it degraded (default 500 ms; docs/http.md, "Health"). */
  healthTimeoutMs?: number;
  /**
   * Called with every error answered with a 5xx status, with its full details (`cause` holds
   * the engine's error, SQL and paths included). Default: one line on `console.error`.
   */
  onError?: (error: unknown, context: ErrorContext) => void;
  /**
   * How long the serialized answer of a cached endpoint is reused for the same URL, format and
   * key check, in ms of the endpoints' real cache clock (default 1000; 0 turns it off). Never past the result's lifetime;
   * a warming refresh shows after at most this long.
   */
  microcacheMs?: number;
  /**
   * Serve the dashboard page at `{basePath}/` and `{basePath}/dashboard` (default: off). The page
   * itself needs no key; it asks for one and sends it with every data request. Throws at
   * creation when the page is not built.
   */
  dashboard?: boolean | DashboardOptions;
  /** Limits of the ingest routes. */
  ingest?: IngestLimits;
  /**
   * The source OTLP log records go to when the request names none and their resource's
   * `service.name` is no source's ingest name (a name, UUID or source, e.g. `'edgeLogs'`; default:
   * none, and such records are refused). docs/ingest.md, "OpenTelemetry (OTLP)".
   */
  otlpDefaultSource?: string;
  /**
   * `GET /metrics` (Prometheus' text format, docs/operations.md) without a key, for a scraper that
   * cannot send one (default: off, a query key is needed as on every route but `/health`).
   */
  openMetrics?: boolean;
  /**
   * Log drains (`openDrains`): Studio's Log Drains calls (`/api/backends`, `/api/rules`) create,
   * change and delete them, with a query key (docs/supabase.md, "Log Drains"). Without it the
   * list is empty and creating one is refused.
   */
  drains?: Drains;
}

/** The longest URL the handler serves by default, in bytes. */
export const DEFAULT_MAX_URL_BYTES = 64 * 1024;

/**
 * `maxHeaderSize` of the node:http servers this package starts: the longest URL plus room for
 * the other headers (Node counts the request line within its header limit).
 */
export const MAX_HEADER_BYTES = DEFAULT_MAX_URL_BYTES + 16 * 1024;

/** Limits of the ingest routes. */
export interface IngestLimits {
  /** Largest body after decompression (default 12 MiB, Logflare's); larger ones get 413 `payload_too_large`. */
  maxBodyBytes?: number;
  /**
   * Body bytes of all ingest requests being read and stored at once (default 64 MiB); past it a
   * request gets 503 `overloaded` with `Retry-After`, so memory stays bounded under a burst.
   */
  maxBytesInFlight?: number;
}

/** CORS settings. */
export interface CorsOptions {
  /** Allowed origins: `'*'`, one origin, or a list (`https://app.example.com`). */
  origin: string | readonly string[];
  /** Seconds a browser may cache a preflight answer (default 600). */
  maxAge?: number;
}

export interface ResolvedOptions {
  apiKeys: readonly string[];
  ingestKeys: readonly string[];
  auth: boolean;
  basePath: string;
  cors: CorsOptions | null;
  maxUrlLength: number;
  healthTimeoutMs: number;
  onError: (error: unknown, context: ErrorContext) => void;
  microcacheMs: number;
  dashboard: DashboardOptions | null;
  ingest: Required<IngestLimits>;
  openMetrics: boolean;
  otlpDefaultSource: string | null;
  drains: Drains | null;
}

/** Defaults applied, the base path normalised, and a handler without keys refused. */
export function resolveOptions(options: HandlerOptions): ResolvedOptions {
  const apiKeys = (options.apiKeys ?? []).filter((k) => typeof k === 'string' && k.length > 0);
  const ingestKeys = (options.ingestKeys ?? []).filter((k) => typeof k === 'string' && k.length > 0);
  if (options.auth !== false && apiKeys.length === 0 && ingestKeys.length === 0) {
    throw new InvalidOptionError('apiKeys', 'createHandler: no API key configured. Pass apiKeys: ["..."], or auth: false to serve without keys.');
  }
  return {
    apiKeys,
    ingestKeys,
    auth: options.auth !== false,
    basePath: normalizeBasePath(options.basePath ?? ''),
    cors: options.cors ?? null,
    maxUrlLength: options.maxUrlLength ?? DEFAULT_MAX_URL_BYTES,
    healthTimeoutMs: options.healthTimeoutMs ?? 500,
    onError: options.onError ?? logToConsole,
    microcacheMs: Math.max(0, options.microcacheMs ?? 1000),
    dashboard: options.dashboard === true ? {} : options.dashboard || null,
    openMetrics: options.openMetrics === true,
    otlpDefaultSource: options.otlpDefaultSource || null,
    drains: options.drains ?? null,
    ingest: {
      maxBodyBytes: positiveOr(options.ingest?.maxBodyBytes, MAX_BODY_BYTES, 'ingest.maxBodyBytes'),
      maxBytesInFlight: positiveOr(options.ingest?.maxBytesInFlight, 64 * 1024 * 1024, 'ingest.maxBytesInFlight'),
    },
  };
}

function positiveOr(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidOptionError(name, `createHandler: ${name} must be a positive integer.`);
  return value;
}

/** `logs`, `/logs/` and `/logs` all mean `/logs`; `/` and `` mean no prefix. */
function normalizeBasePath(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '') return '';
  if (!/^\/?[A-Za-z0-9._~!$&'()*+,;=:@%/-]+$/.test(trimmed)) throw new InvalidOptionError('basePath', `createHandler: invalid basePath "${path}".`);
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

function logToConsole(error: unknown, context: ErrorContext): void {
  console.error(`[log-endpoints] ${context.status} ${context.method} ${context.path} (request ${context.requestId}):`, error);
}
