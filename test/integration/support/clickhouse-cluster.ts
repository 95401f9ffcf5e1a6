import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, requireBinary } from './servers';

/** One clickhouse-server of a test cluster. */
export interface ClickHouseShard {
  /** HTTP interface, e.g. http://127.0.0.1:41234 */
  url: string;
  httpPort: number;
  tcpPort: number;
  process: ChildProcess;
}

/** A throwaway cluster of clickhouse-server processes on loopback, one shard each. */
export interface ClickHouseCluster {
  /** The cluster's name in `remote_servers`. */
  name: string;
  shards: ClickHouseShard[];
  /** The first shard's HTTP URL: where the tests connect (any shard would do). */
  url: string;
  stop(): Promise<void>;
  /** Kills every server (SIGKILL), keeping their data: ClickHouse is away until `restart`. */
  kill(): Promise<void>;
  /** Starts every server again on the same ports and data; resolves once all are ready. */
  restart(): Promise<void>;
}

/**
 * Starts `shards` clickhouse-server processes (Debian's package, 18.16 here) on free loopback
 * ports, each with its own data folder in a temporary directory, and a `remote_servers` cluster
 * naming all of them as shards: `Distributed` tables over it read and write every process.
 * Ready when every server has logged that it accepts connections; `stop` ends them and removes
 * the folder. With `dir` (the bench's servers), the data lives there and is kept: `stop` ends
 * the servers politely (SIGTERM) and leaves the folder for the next run.
 */
export async function startClickHouseCluster(options: { shards?: number; name?: string; dir?: string } = {}): Promise<ClickHouseCluster> {
  const binary = requireBinary('clickhouse-server');
  const name = options.name ?? 'le_test';
  const keep = options.dir !== undefined;
  const root = keep ? options.dir! : mkdtempSync(join(tmpdir(), 'le-clickhouse-'));
  let ports: Array<{ http: number; tcp: number }> = [];
  const shards: ClickHouseShard[] = [];
  const launch = (dir: string) => spawn(binary, [`--config-file=${join(dir, 'config.xml')}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const dirOf = (i: number) => join(root, `shard-${i + 1}`);
  // A port found free can be taken before the server binds it (another test's server, or an
  // outgoing connection given it as its local port): such a start is tried again on new ports.
  for (let attempt = 1; ; attempt++) {
    const free = await freePorts(2 * (options.shards ?? 2));
    ports = Array.from({ length: free.length / 2 }, (_, i) => ({ http: free[2 * i]!, tcp: free[2 * i + 1]! }));
    const remoteServers = ports.map((p) => `<shard><replica><host>127.0.0.1</host><port>${p.tcp}</port></replica></shard>`).join('');
    try {
      await Promise.all(
        ports.map(async (p, i) => {
          const dir = dirOf(i);
          for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(dir, sub), { recursive: true });
          writeFileSync(join(dir, 'config.xml'), serverConfig(dir, p.http, p.tcp, name, remoteServers));
          writeFileSync(join(dir, 'users.xml'), USERS);
          const child = launch(dir);
          shards.push({ url: `http://127.0.0.1:${p.http}`, httpPort: p.http, tcpPort: p.tcp, process: child });
          await ready(child);
        }),
      );
      break;
    } catch (error) {
      await stopAll(shards);
      shards.length = 0;
      if (attempt < 3 && /Address already in use/.test(String((error as Error).message))) continue;
      if (!keep) rmSync(root, { recursive: true, force: true });
      throw error;
    }
  }
  shards.sort((a, b) => ports.findIndex((p) => p.http === a.httpPort) - ports.findIndex((p) => p.http === b.httpPort));
  return {
    name,
    shards,
    url: shards[0]!.url,
    stop: async () => {
      await stopAll(shards, keep ? 'SIGTERM' : 'SIGKILL');
      if (!keep) rmSync(root, { recursive: true, force: true });
    },
    kill: () => stopAll(shards),
    restart: async () => {
      await Promise.all(
        shards.map(async (shard) => {
          shard.process = launch(dirOf(ports.findIndex((p) => p.http === shard.httpPort)));
          await ready(shard.process);
        }),
      );
    },
  };
}

/** Resolves when the server logs that it is ready; rejects when it exits first. */
function ready(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!output.includes('Ready for connections')) return;
      // From now on the log is read and dropped, so the pipes never fill up and stall the server.
      child.stdout!.off('data', onData).resume();
      child.stderr!.off('data', onData).resume();
      resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (error) => reject(new Error(`clickhouse-server could not be started: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`clickhouse-server exited with code ${code}: ${output.slice(-2000)}`)));
  });
}

async function stopAll(shards: ClickHouseShard[], signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
  await Promise.all(
    shards.map(async ({ process: child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // SIGKILL when nothing is kept (the data folder is removed next).
      child.kill(signal);
      await once(child, 'exit');
    }),
  );
}

function serverConfig(dir: string, httpPort: number, tcpPort: number, cluster: string, remoteServers: string): string {
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>information</level><console>1</console></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
  <remote_servers><${cluster}>${remoteServers}</${cluster}></remote_servers>
</yandex>
`;
}

const USERS = `<?xml version="1.0"?>
<yandex>
  <profiles>
    <default></default>
    <!-- What ClickHouse 25.8 and later do by default: 64-bit integers as bare JSON numbers. -->
    <bare_int64><output_format_json_quote_64bit_integers>0</output_format_json_quote_64bit_integers></bare_int64>
  </profiles>
  <users>
    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>
    <bare_int64>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>bare_int64</profile>
      <quota>default</quota>
    </bare_int64>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;
