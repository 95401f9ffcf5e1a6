import { Weighted, uuid, type Prng } from '../../../src/fixtures/prng';
import { isoMillis, isoNanos, isoSeconds, millisOf, utcParts, type Micros } from './instants';
import type { VectorEvent } from './vector-sources';

/**
 * GoTrue, PostgREST, Realtime and Storage lines as self-hosted Vector ships them (supabase/supabase
 * `docker/volumes/logs/vector.yml`, transforms `auth_logs`, `rest_logs`, `realtime_logs`,
 * `storage_logs`). Every event starts as `project_logs` leaves it: Docker's `timestamp`
 * (nanoseconds), `project` "default", `event_message`, `appname`.
 */

/** An instant with Docker's nanoseconds past the microsecond. */
export interface At {
  micros: Micros;
  nanos: number;
}

// ---- GoTrue (auth_logs): its JSON line merged into `metadata`, plus `metadata.timestamp` = its `time`.

const AUTH_REQUESTS = new Weighted<readonly [string, string, number, string | null]>([
  [['POST', '/token', 200, null], 30],
  [['POST', '/token', 400, 'invalid_grant: Invalid login credentials'], 8],
  [['GET', '/user', 200, null], 20],
  [['GET', '/user', 401, 'invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired'], 4],
  [['POST', '/signup', 200, null], 4],
  [['POST', '/signup', 422, 'User already registered'], 2],
  [['POST', '/signup', 429, 'Email rate limit exceeded'], 1],
  [['POST', '/invite', 200, null], 1],
  [['GET', '/verify', 303, null], 2],
  [['POST', '/recover', 200, null], 1],
  [['POST', '/logout', 204, null], 3],
  [['POST', '/otp', 200, null], 1],
  [['POST', '/magiclink', 200, null], 1],
  [['GET', '/authorize', 302, null], 1],
  [['GET', '/callback', 302, null], 1],
  [['GET', '/admin/users', 200, null], 2],
  [['POST', '/admin/users', 500, 'Database error creating new user'], 1],
  [['GET', '/settings', 200, null], 3],
  [['GET', '/health', 200, null], 4],
]);

const AUDIT_ACTIONS = ['login', 'logout', 'user_signedup', 'token_refreshed', 'user_recovery_requested'];
const ACTORS = ['ana@example.com', 'zoë@example.com', 'service_role', 'björn@example.org'];

/** A GoTrue line at `at`: a request log, an audit event, a boot message, or a line that is not JSON. */
export function authEvent(prng: Prng, at: At): VectorEvent {
  const timestamp = isoNanos(at.micros, at.nanos);
  const time = isoSeconds(at.micros);
  const roll = prng.next();
  if (roll < 0.06) {
    // Not JSON (the migrator's own output): `parse_json` fails, no `metadata` at all.
    const t = utcParts(at.micros);
    const event_message = `${t.year}/${t.month}/${t.day} ${t.time} [POP] ${t.year}/${t.month}/${t.day} ${t.time} info - ${(prng.next() / 100).toFixed(4)} seconds`;
    return { appname: 'supabase-auth', event_message, project: 'default', timestamp };
  }
  let line: Record<string, unknown>;
  if (roll < 0.1) {
    const [level, msg] = prng.pick([
      ['info', 'Migrations already up to date, nothing to apply'],
      ['info', 'GoTrue API started on: 0.0.0.0:9999'],
      ['warning', "DEPRECATION NOTICE: GOTRUE_JWT_ADMIN_GROUP_NAME not supported by Supabase's GoTrue, will be removed soon"],
      ['fatal', 'running db migrations: error executing migrations/20221208132122_backfill_email_last_sign_in_at.up.sql'],
      ['error', 'Error sending magic link email: gomail: could not send email 1: dial tcp: lookup smtp on 127.0.0.11:53: no such host'],
    ] as const);
    line = { level, msg, time };
  } else if (roll < 0.25) {
    line = {
      auth_event: {
        action: prng.pick(AUDIT_ACTIONS),
        actor_id: uuid(prng),
        actor_username: prng.pick(ACTORS),
        actor_via_sso: false,
        log_type: prng.pick(['account', 'token', 'user']),
        ...(prng.chance(0.5) ? { traits: { provider: 'email' } } : {}),
      },
      component: 'api',
      level: 'info',
      method: 'POST',
      msg: 'audit_event',
      path: '/token',
      remote_addr: '172.18.0.1',
      request_id: uuid(prng),
      time,
    };
  } else {
    const [method, path, status, error] = AUTH_REQUESTS.pick(prng);
    // GoTrue logs failed requests at level info; a 5xx at error (what the severity filters read).
    line = {
      component: 'api',
      duration: 1000 + prng.int(900_000),
      ...(error === null ? {} : { error }),
      level: status >= 500 ? 'error' : prng.chance(0.03) ? 'warning' : 'info',
      method,
      msg: 'request completed',
      path,
      referer: 'http://localhost:3000',
      remote_addr: '172.18.0.1',
      request_id: uuid(prng),
      status,
      time,
    };
  }
  return { appname: 'supabase-auth', event_message: JSON.stringify(line), metadata: { ...line, timestamp: line.time }, project: 'default', timestamp };
}

// ---- PostgREST (postgrest_logs): `<time>: <message>` split, the line's own time, `metadata.host`.

const POSTGREST_MESSAGES = [
  'Starting PostgREST 12.2.3...',
  'Attempting to connect to the database...',
  'Connection successful',
  'Listening on port 3000',
  'Config reloaded',
  'Schema cache queried in 14.2 milliseconds',
  'Schema cache loaded 12 Relations, 9 Relationships, 3 Functions, 0 Domain Representations, 4 Media Type Handlers',
  'Schema cache loaded in 3.1 milliseconds',
  'Received a config reload message on the "pgrst" channel',
  'Error: an error occurred when trying to query the database',
];

/** A PostgREST line at `at`; one whose message holds `: ` defeats the transform and arrives as Docker sent it. */
export function postgrestEvent(prng: Prng, at: At): VectorEvent {
  const t = utcParts(at.micros);
  const prefix = `${t.day}/${t.monthName}/${t.year}:${t.time} +0000`;
  if (prng.chance(0.1)) {
    // `to_timestamp!` fails on the greedy time group: the remap errs and the event passes unchanged.
    const message = `${prefix}: Failed to query the database: connection to server at "db" (172.18.0.3), port 5432 failed`;
    return { appname: 'supabase-rest', event_message: message, project: 'default', timestamp: isoNanos(at.micros, at.nanos) };
  }
  return {
    appname: 'supabase-rest',
    event_message: prng.pick(POSTGREST_MESSAGES),
    metadata: { host: 'default' },
    project: 'default',
    timestamp: isoSeconds(at.micros),
  };
}

// ---- Realtime (realtime_logs): `project` moved into metadata (and `external_id`), `[level]` parsed.

const REALTIME_LINES = new Weighted<readonly [string, string]>([
  [['info', 'Running RealtimeWeb.Endpoint with Bandit 1.5.7 at :::4000 (http)'], 1],
  [['info', 'Billing metrics: [:realtime, :connections]'], 8],
  [['info', 'Starting replication for slot supabase_realtime_messages_replication_slot_'], 2],
  [['debug', 'Tenant realtime-dev: 2 channels joined'], 4],
  [['warning', "Tenant doesn't exist: realtime-dev"], 1],
  [['error', 'GenServer {Realtime.Registry.Unique, {Realtime.Tenants.Connect, "realtime-dev", :tenant_id}} terminating'], 1],
  [['notice', 'Application realtime exited: shutdown'], 1],
]);

/** A Realtime line at `at`: `HH:MM:SS.mmm [level] message`, or a line the regex does not take (kept whole, no level). */
export function realtimeEvent(prng: Prng, at: At): VectorEvent {
  const t = utcParts(at.micros);
  let level: string | undefined;
  let message: string;
  if (prng.chance(0.12)) {
    message = prng.pick([
      `${t.time}.${millisOf(at.micros)} project=realtime-dev external_id=realtime-dev [info] Connected to Postgres database ✓`,
      '** (Postgrex.Error) ERROR 42P01 (undefined_table) relation "realtime.tenants" does not exist',
      '    (realtime 2.33.58) lib/realtime/tenants/connect.ex:112: Realtime.Tenants.Connect.handle_continue/2',
    ]);
  } else {
    [level, message] = REALTIME_LINES.pick(prng);
  }
  const metadata = { external_id: 'default', ...(level === undefined ? {} : { level }), project: 'default' };
  return { appname: 'realtime-dev.supabase-realtime', event_message: message, metadata, timestamp: isoNanos(at.micros, at.nanos) };
}

// ---- Storage (storage_logs): `project` moved into metadata (and `tenantId`), pino's JSON read.

const STORAGE_MESSAGES = new Weighted<readonly [string, string]>([
  [['info', 'GET | 200 | 172.18.0.8 | {id} | /object/public/avatars/a.png | supabase-js/2.45.0'], 8],
  [['info', 'POST | 200 | 172.18.0.8 | {id} | /object/avatars/a.png | Mozilla/5.0'], 3],
  [['info', 'GET | 404 | 172.18.0.8 | {id} | /object/public/avatars/missing.png | curl/8.5.0'], 2],
  [['warn', 'GET | 400 | 172.18.0.8 | {id} | /object/sign/docs/report.pdf | supabase-js/2.45.0'], 1],
  [['error', 'Error: Invalid JWT: jwt expired'], 1],
  [['info', 'Uploaded Über-Bild.png (3.2 MB)'], 1],
]);

/** A Storage line at `at`: pino JSON read into the event, or a plain line kept as it is. */
export function storageEvent(prng: Prng, at: At): VectorEvent {
  const timestamp = isoNanos(at.micros, at.nanos);
  if (prng.chance(0.08)) {
    const event_message = prng.pick(['Server listening at http://0.0.0.0:5000', 'Running migrations', '> storage-api@1.11.13 start']);
    return { appname: 'supabase-storage', event_message, metadata: { project: 'default', tenantId: 'default' }, timestamp };
  }
  const reqId = `req-${prng.int(5000).toString(36)}`;
  const [level, template] = STORAGE_MESSAGES.pick(prng);
  // A JSON line without `msg` (pino's serialised error objects): `event_message = parsed.msg` makes it null.
  const msg = prng.chance(0.03) ? null : template.replace('{id}', reqId);
  const pino = { hostname: '8f2c1e7b9a0d', level, msg, pid: 1, reqId, time: isoMillis(at.micros) };
  const metadata = { context: [{ host: pino.hostname, pid: pino.pid }], level, project: 'default', reqId, tenantId: 'default', timestamp: pino.time };
  return { appname: 'supabase-storage', event_message: msg, metadata, timestamp };
}
