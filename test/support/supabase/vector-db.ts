import { Weighted, type Prng } from '../../../src/fixtures/prng';
import { isoNanos, millisOf, utcParts } from './instants';
import type { At } from './vector-services';
import type { VectorEvent } from './vector-sources';

/**
 * Postgres and PgBouncer lines as self-hosted Vector ships them to `postgres.logs` and
 * `pgbouncer.logs.prod` (docs/supabase.md, "Sources"; supabase/supabase
 * `docker/volumes/logs/vector.yml`, transform `db_logs`): `project`, `metadata.host`, and for
 * Postgres `metadata.parsed` with `error_severity` (upper case, `LOG` when the line names none) and
 * `timestamp` (the event's), plus what the line carries: `user_name`, `database_name`,
 * `application_name` (pg_cron's background workers say `pg_cron`), `query`, `detail`, `hint`.
 */

interface DbLine {
  severity: string;
  message: string;
  user?: string | null;
  app?: string | null;
  query?: string;
  detail?: string;
  hint?: string;
}

const STATEMENTS = new Weighted<DbLine>([
  [{ severity: 'LOG', message: 'statement: COMMIT', user: 'postgres', app: 'psql', query: 'COMMIT' }, 6],
  [{ severity: 'LOG', message: 'statement: BEGIN', user: 'postgres', app: 'psql', query: 'BEGIN' }, 3],
  [{ severity: 'LOG', message: 'duration: 0.412 ms  statement: COMMIT', user: 'authenticator', app: 'PostgREST 12.2.3', query: 'COMMIT' }, 5],
  [{ severity: 'LOG', message: 'statement: COMMIT', user: 'supabase_auth_admin', app: 'Supabase Auth', query: 'COMMIT' }, 3],
  [{ severity: 'LOG', message: 'statement: select * from public.todos limit 10', user: 'supabase_admin', app: 'postgres-meta 0.84.2', query: 'select * from public.todos limit 10' }, 4],
  [{ severity: 'LOG', message: 'connection authorized: user=authenticator database=postgres application_name=PostgREST 12.2.3', user: 'authenticator', app: 'PostgREST 12.2.3' }, 4],
  [{ severity: 'LOG', message: 'checkpoint starting: time', user: null, app: null }, 3],
  [{ severity: 'LOG', message: 'checkpoint complete: wrote 12 buffers (0.1%); 0 WAL file(s) added, 0 removed, 0 recycled', user: null, app: null }, 2],
  [
    {
      severity: 'ERROR',
      message: 'relation "tâche" does not exist at character 15',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
      query: 'select * from "tâche"',
      hint: 'Perhaps you meant to reference the table "public.taches".',
    },
    3,
  ],
  [
    {
      severity: 'ERROR',
      message: 'duplicate key value violates unique constraint "todos_pkey"',
      user: 'authenticator',
      app: 'PostgREST 12.2.3',
      query: 'insert into todos (id) values (1)',
      detail: 'Key (id)=(1) already exists.',
    },
    3,
  ],
  [{ severity: 'ERROR', message: 'permission denied for table secrets', user: 'anon', app: 'PostgREST 12.2.3', query: 'select * from secrets' }, 1],
  [
    {
      severity: 'FATAL',
      message: 'password authentication failed for user "supabase_admin"',
      user: 'supabase_admin',
      app: '',
      detail: 'Connection matched pg_hba.conf line 89: "host all all 0.0.0.0/0 scram-sha-256"',
    },
    2,
  ],
  [{ severity: 'FATAL', message: 'terminating connection due to administrator command', user: 'postgres', app: 'Supavisor' }, 1],
  [{ severity: 'PANIC', message: 'could not write to file "pg_wal/xlogtemp.42": No space left on device', user: null, app: null }, 1],
  [{ severity: 'WARNING', message: 'there is no transaction in progress', user: 'postgres', app: 'psql', query: 'COMMIT' }, 2],
  [{ severity: 'NOTICE', message: 'extension "pg_net" already exists, skipping', user: 'supabase_admin', app: 'psql', query: 'create extension if not exists pg_net' }, 1],
  [{ severity: 'INFO', message: 'vacuuming "public.todos"', user: 'postgres', app: 'psql', query: 'vacuum verbose todos' }, 1],
]);

const CRON = new Weighted<DbLine>([
  [
    {
      severity: 'LOG',
      message: "cron job 3 starting: SELECT net.http_get('http://kong:8000/functions/v1/hello')",
      user: 'postgres',
      app: 'pg_cron',
      query: "SELECT net.http_get('http://kong:8000/functions/v1/hello')",
    },
    6,
  ],
  [{ severity: 'LOG', message: 'cron job 3 COMMAND completed: SELECT 1', user: 'postgres', app: 'pg_cron' }, 6],
  [{ severity: 'ERROR', message: 'cron job 4 failed: relation "old_sessions" does not exist', user: 'postgres', app: 'pg_cron', query: 'delete from old_sessions' }, 1],
  [{ severity: 'LOG', message: 'pg_cron scheduler started', user: null, app: 'pg_cron' }, 1],
  // The launcher logs as the postmaster's child: no application_name, but the line says "cron job".
  [{ severity: 'LOG', message: 'cron job 7 completed: 1 row', user: null, app: null }, 1],
]);

/** A Postgres line at `at`; about one in six from pg_cron. */
export function postgresEvent(prng: Prng, at: At): VectorEvent {
  const line = prng.chance(0.16) ? CRON.pick(prng) : STATEMENTS.pick(prng);
  const timestamp = isoNanos(at.micros, at.nanos);
  const t = utcParts(at.micros);
  const who = line.user ? `${line.user}@postgres ` : '';
  const user = line.user ?? undefined;
  // Keys in byte order, as Vector writes them; a field the line does not have is absent.
  const parsed = {
    application_name: line.app ?? undefined,
    database_name: user && 'postgres',
    detail: line.detail,
    error_severity: line.severity,
    hint: line.hint,
    query: line.query,
    timestamp,
    user_name: user,
  };
  return {
    appname: 'supabase-db',
    event_message: `${t.year}-${t.month}-${t.day} ${t.time}.${millisOf(at.micros)} UTC [${100 + prng.int(900)}] ${who}${line.severity}:  ${line.message}`,
    metadata: { host: 'db-default', parsed: defined(parsed) },
    project: 'default',
    timestamp,
  };
}

const PGBOUNCER = new Weighted<string>([
  ['LOG stats: 0 xacts/s, 0 queries/s, 0 client parses/s, 0 server parses/s, 0 binds/s, in 0 B/s, out 0 B/s, xact 0 us, query 0 us, wait 0 us', 8],
  ['LOG C-0x55d5c1a0: postgres/authenticator@172.18.0.5:45678 login attempt: db=postgres user=authenticator tls=no replication=no', 4],
  ['LOG C-0x55d5c1a0: postgres/authenticator@172.18.0.5:45678 closing because: client close request (age=12s)', 3],
  ['WARNING C-0x55d5c1b8: (nodb)/(nouser)@172.18.0.9:51234 pooler error: no such user: pgbouncer', 1],
  ['ERROR S: login failed: FATAL: password authentication failed for user "pgbouncer"', 1],
]);

/** A PgBouncer line at `at`. */
export function pgbouncerEvent(prng: Prng, at: At): VectorEvent {
  const t = utcParts(at.micros);
  return {
    appname: 'supabase-pooler',
    event_message: `${t.year}-${t.month}-${t.day} ${t.time}.${millisOf(at.micros)} UTC [1] ${PGBOUNCER.pick(prng)}`,
    metadata: { host: 'default' },
    project: 'default',
    timestamp: isoNanos(at.micros, at.nanos),
  };
}

/** The object without its undefined fields (absent in Vector's JSON). */
function defined<T extends object>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as Partial<T>;
}
