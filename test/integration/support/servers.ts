import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';

/**
 * The servers the integration suite needs and does not ship, with the Debian package that
 * provides each: a missing one fails its tests with this one-line hint.
 */
const INSTALL_HINTS: Record<string, string> = {
  'redis-server': 'apt-get install -y redis-server',
  'clickhouse-server': 'apt-get install -y clickhouse-server',
  clickhouse: 'apt-get install -y clickhouse-server',
  chromium: 'apt-get install -y chromium',
  // The http() destination is a module of its own package.
  'syslog-ng': 'apt-get install -y syslog-ng-core syslog-ng-mod-http',
};

/** Folders searched besides PATH: Debian puts some servers in sbin, which a non-root PATH lacks. */
const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/bin', '/usr/local/bin'];

/**
 * The absolute path of a server binary, or an error naming the package to install. Never skips:
 * an integration test without its server fails, so a green run means the server was there.
 */
export function requireBinary(name: string, dirs = searchDirs()): string {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (existsSync(candidate)) return candidate;
  }
  const hint = INSTALL_HINTS[name] ?? `install ${name}`;
  throw new Error(`${name} is not installed; the integration tests need it. Install it with: ${hint}`);
}

/** PATH, then the usual sbin and bin folders. */
function searchDirs(): string[] {
  return [...(process.env.PATH ?? '').split(delimiter), ...EXTRA_DIRS].filter(Boolean);
}

/** The first line a binary prints for `--version` (for messages), or null. */
export function versionOf(binary: string, args = ['--version']): string | null {
  try {
    return execFileSync(binary, args, { encoding: 'utf8', timeout: 10_000 }).split('\n')[0] ?? null;
  } catch {
    return null;
  }
}

/** A free loopback port (the OS picks it; the listener is closed before the server binds it). */
/**
 * `count` loopback ports free now and distinct from each other: each is held until all are found
 * (one `freePort` after another may give the same port twice once the first is closed).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer().listen(0, '127.0.0.1'));
  try {
    await Promise.all(servers.map((server) => once(server, 'listening')));
    return servers.map((server) => (server.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.filter((server) => server.listening).map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A throwaway redis-server on a loopback port; `stop` ends it (SIGKILL when it lingers). */
export async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(requireBinary('redis-server'), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.once('error', (error) => reject(new Error(`redis-server could not be started: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code}: ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
  });
  return child;
}
