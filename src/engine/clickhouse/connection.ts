import type { ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseTarget } from './options';
import { clickhouseErrorCode } from './classify-error';
import { runSql, type ServerFeatures } from './run-sql';
import { InvalidOptionError } from '../../errors';

export type { ServerFeatures };

/** A client and what its server can do. */
export interface Connection {
  client: ClickHouseClient;
  features: ServerFeatures;
  /** Closes the client when we created it (from `url`); a client handed to us stays open. */
  close(): Promise<void>;
}

/**
 * Opens the client of a target (from `url`, or the given `client`) and probes its server.
 * `@clickhouse/client` is an optional peer dependency, loaded only here.
 */
export async function connect(target: ClickHouseTarget): Promise<Connection> {
  const { client, close } = await openClient(target);
  try {
    const features = await probeServer(client);
    return { client, features, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The client of a target, without any request yet; `close` closes it only when we created it. */
export async function openClient(target: ClickHouseTarget): Promise<{ client: ClickHouseClient; close: () => Promise<void> }> {
  if (target.client) return { client: target.client, close: async () => undefined };
  const client = await createClient(target);
  return { client, close: () => client.close() };
}

async function createClient(target: ClickHouseTarget): Promise<ClickHouseClient> {
  if (!target.url) throw new InvalidOptionError('url', 'clickhouse: give `url` (or `client`).');
  let module: typeof import('@clickhouse/client');
  try {
    module = await import('@clickhouse/client');
  } catch (error) {
    throw new InvalidOptionError('clickhouse', 'log-endpoints/clickhouse needs the package @clickhouse/client: npm install @clickhouse/client', { cause: error });
  }
  return module.createClient({
    url: target.url,
    username: target.username,
    password: target.password,
    // Our errors carry the details; the client's own console logging would repeat them.
    log: { level: module.ClickHouseLogLevel.OFF },
  });
}

/** Error codes a server without query parameters answers `param_<name>` with. */
const NO_QUERY_PARAMETERS = new Set([
  115, // UNKNOWN_SETTING: 18.x reads param_x as a setting
  62, // SYNTAX_ERROR: a server that does not know the {name:Type} syntax
]);

/**
 * The server's version and whether it binds query parameters, tried rather than inferred from
 * the version: a server that refuses `param_le_probe` as an unknown setting has none.
 */
export async function probeServer(client: ClickHouseClient): Promise<ServerFeatures> {
  const versionResult = await runSql(client, null, { sql: 'SELECT version() AS version', params: {} });
  const version = String(versionResult.data[0]?.version ?? 'unknown');
  try {
    const probe = await runSql(client, { version, queryParameters: true }, { sql: 'SELECT {le_probe:String} AS probe', params: { le_probe: 'ok' } });
    return { version, queryParameters: probe.data[0]?.probe === 'ok' };
  } catch (error) {
    const code = clickhouseErrorCode(error);
    if (code !== null && NO_QUERY_PARAMETERS.has(code)) return { version, queryParameters: false };
    throw error;
  }
}
