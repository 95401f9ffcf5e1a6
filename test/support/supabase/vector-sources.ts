/**
 * The nine feeds self-hosted Supabase's Vector ships to Logflare (docs/supabase.md, "Sources"): the
 * table Studio's SQL reads, the `source_name` Vector's http sink puts in its URI (with Vector's own
 * spelling: `postgREST.logs.prod`), and the container whose lines feed it.
 *
 * The event shapes follow supabase/supabase `docker/volumes/logs/vector.yml` as read at commit
 * 03d712b13ed7f2049e514a99e2bbe0b6af4e9546 (kong, auth, rest, realtime, storage, db, functions);
 * what that version does not have yet (the `deno-subhosting-events` and `pgbouncer.logs.prod`
 * feeds, Postgres's parsed user, database, application, query, detail and hint, Storage's
 * `reqId`) follows docs/supabase.md's table of what Vector sends.
 */
export const VECTOR_SOURCES = [
  { table: 'edge_logs', sourceName: 'cloudflare.logs.prod', appname: 'supabase-kong' },
  { table: 'auth_logs', sourceName: 'gotrue.logs.prod', appname: 'supabase-auth' },
  { table: 'postgrest_logs', sourceName: 'postgREST.logs.prod', appname: 'supabase-rest' },
  { table: 'realtime_logs', sourceName: 'realtime.logs.prod', appname: 'realtime-dev.supabase-realtime' },
  { table: 'storage_logs', sourceName: 'storage.logs.prod.2', appname: 'supabase-storage' },
  { table: 'postgres_logs', sourceName: 'postgres.logs', appname: 'supabase-db' },
  { table: 'function_edge_logs', sourceName: 'deno-relay-logs', appname: 'supabase-edge-functions' },
  { table: 'function_logs', sourceName: 'deno-subhosting-events', appname: 'supabase-edge-functions' },
  { table: 'pgbouncer_logs', sourceName: 'pgbouncer.logs.prod', appname: 'supabase-pooler' },
] as const;

/** A table of Studio's SQL that self-hosted has: one per Vector feed. */
export type LogTable = (typeof VECTOR_SOURCES)[number]['table'];

/** Every table, in the order of `VECTOR_SOURCES`. */
export const LOG_TABLES: readonly LogTable[] = VECTOR_SOURCES.map((s) => s.table);

/** One event as Vector's http sink sends it (`codec: json`): an object of the fields the remap left. */
export type VectorEvent = Record<string, unknown>;

/** The events of every feed. */
export type VectorEvents = Record<LogTable, VectorEvent[]>;

/** The Vector `source_name` of a table. */
export function sourceNameOf(table: LogTable): string {
  return VECTOR_SOURCES.find((s) => s.table === table)!.sourceName;
}

/**
 * Whether every object in `value` has its keys in byte order, as Vector's JSON codec writes a VRL
 * object (an ordered map): the builders write their events so, and the tests check it.
 */
export function keysInVectorOrder(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(keysInVectorOrder);
  if (value === null || typeof value !== 'object') return true;
  const keys = Object.keys(value);
  return keys.every((key, i) => i === 0 || keys[i - 1]! < key) && keys.every((key) => keysInVectorOrder((value as Record<string, unknown>)[key]));
}
