import type { ClickHouseClient } from '@clickhouse/client';
import { InvalidOptionError } from '../../errors';
import type { SourceDescriptor } from '../../sources/source-descriptor';
import { BUILT_IN_SOURCE_SET } from '../../sources/built-ins';
import type { SourceSet } from '../../sources/source-set';
import type { ClickHouseServer } from '../../managed/clickhouse-server';

// The plain-configuration part lives apart, without the client's types: the core's managed
// storage names it, and the core's types must not need the optional peer @clickhouse/client.
export type { ClickHouseServer, ClickHouseTables } from '../../managed/clickhouse-server';

/**
 * Where the logs live in ClickHouse. Give `url` (and credentials), or a `client` you created
 * with `@clickhouse/client` (its own URL, credentials, TLS and keep-alive settings are used; it is
 * yours to close).
 */
export interface ClickHouseTarget extends ClickHouseServer {
  /** An existing `@clickhouse/client` client instead of `url`. */
  client?: ClickHouseClient;
  /**
   * Sources of your own, beside the built-ins (descriptors made with `defineSource`, as given to
   * `createEndpoints`): their tables are created, loaded and queried too. Default: the built-ins.
   */
  sourceDefinitions?: readonly SourceDescriptor[];
}

/**
 * The sources a target works with: the built-ins and its `sourceDefinitions`. A `tables` entry
 * for a source that is not one of them is an `InvalidOptionError` (it would be ignored).
 *
 * @example
 * sourcesOfTarget({ database: 'logs', sourceDefinitions: [authLogs] }).names; // ['edgeLogs', 'functionEdgeLogs', 'authLogs']
 */
export function sourcesOfTarget(target: Pick<ClickHouseTarget, 'tables' | 'sourceDefinitions'>): SourceSet {
  const sources = BUILT_IN_SOURCE_SET.extend(target.sourceDefinitions);
  for (const name of Object.keys(target.tables ?? {})) {
    if (!sources.has(name)) throw new InvalidOptionError(`tables.${name}`, `tables.${name} is not a log source; the sources are ${sources.names.join(', ')} (declare more with sourceDefinitions).`);
  }
  return sources;
}

/** The table queries read and inserts write, per source (the Distributed one on a cluster). */
export function tableOf(target: Pick<ClickHouseTarget, 'tables'>, source: SourceDescriptor): string {
  return target.tables?.[source.name] ?? source.clickhouse.table;
}

/** The MergeTree table holding the rows on each server: `<table>_local` on a cluster. */
export function localTableOf(target: Pick<ClickHouseTarget, 'tables' | 'cluster'>, source: SourceDescriptor): string {
  const table = tableOf(target, source);
  return target.cluster ? `${table}_local` : table;
}

/**
 * A target's `database`, checked where an engine or a loader is made: without one every query
 * names the database "undefined" and fails ("Database undefined doesn't exist"), a cluster or not.
 *
 * @example
 * requireDatabase({ url: 'http://ch:8123', cluster: 'logs' }, 'clickhouseEngine'); // throws InvalidOptionError
 */
export function requireDatabase(target: { database?: unknown; cluster?: unknown }, factory: string): void {
  if (typeof target.database === 'string' && target.database !== '') return;
  const tables = target.cluster ? 'the Distributed tables' : 'the tables';
  throw new InvalidOptionError(
    'database',
    `${factory} needs database: the database of ${tables} (\`log-endpoints clickhouse init\` creates it), e.g. { database: 'default' }, not ${target.database === '' ? 'an empty name' : typeof target.database}.`,
  );
}

/**
 * A target's server, checked where an engine or a loader is made: `url`, or a `client` of yours.
 * Without either, nothing could ever connect.
 *
 * @example
 * requireServer({ database: 'logs' }, 'clickhouseEngine'); // throws InvalidOptionError (option 'url')
 */
export function requireServer(target: { url?: unknown; client?: unknown }, factory: string): void {
  if (target.client || (typeof target.url === 'string' && target.url !== '')) return;
  throw new InvalidOptionError('url', `${factory} needs url (e.g. 'http://localhost:8123') or a client made with @clickhouse/client.`);
}
