import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, waitForStdout } from '../support/cli';
import { tempDir } from '../support/log-files';
import { splitPage } from '../support/markdown';
import { freePort, requireBinary } from './support/servers';

// The syslog-ng configuration of docs/ingest.md, as written, in a real syslog-ng: it ships the
// lines it receives to a real `serve --data-dir`, and logs.all serves them.

const KEY = 'syslog-query-key';
const INGEST_KEY = 'syslog-ingest-key';
const tmp = tempDir('le-syslog-ng-');
let server: ReturnType<typeof spawnCli>;
let url: string;
let syslog: ChildProcess;
let syslogPort: number;
let syslogOutput = '';

/** The docs' block, pointed at this test's server and key, fed by a TCP source named as Debian's. */
function configuration(version: string, port: number): string {
  const block = splitPage(readFileSync(new URL('../../docs/ingest.md', import.meta.url), 'utf8')).blocks.find(({ code }) => code.includes('destination d_log_endpoints'))!;
  expect(block.lang).toBe('conf');
  expect(block.code).toContain('http://127.0.0.1:4000/api/logs?source_name=cloudflare.logs.prod');
  return [
    `@version: ${version}`,
    // RFC 5424 lines (with their full timestamp) on a loopback port, in place of the system log.
    `source s_src { syslog(transport("tcp") ip("127.0.0.1") port(${port})); };`,
    block.code.replace('http://127.0.0.1:4000', url).replace('ship-key', INGEST_KEY),
  ].join('\n');
}

beforeAll(async () => {
  const binary = requireBinary('syslog-ng');
  server = spawnCli(['serve', '--data-dir', tmp.path('data'), '--api-key', KEY, '--ingest-key', INGEST_KEY, '--port', '0']);
  url = (await waitForStdout(server, /Listening on (http:\/\/\S+) /))[1]!;
  // The configuration syntax this syslog-ng speaks ("Config version: 3.35").
  const version = /Config version: (\S+)/.exec(execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 }))![1]!;
  syslogPort = await freePort();
  writeFileSync(tmp.path('syslog-ng.conf'), configuration(version, syslogPort));
  syslog = spawn(binary, ['-F', '--no-caps', '-f', tmp.path('syslog-ng.conf'), '-R', tmp.path('persist'), '-p', tmp.path('pid'), '-c', tmp.path('ctl')], { stdio: ['ignore', 'pipe', 'pipe'] });
  syslog.stdout!.on('data', (c: Buffer) => (syslogOutput += c.toString()));
  syslog.stderr!.on('data', (c: Buffer) => (syslogOutput += c.toString()));
  await listening(syslogPort, syslog);
});

afterAll(async () => {
  for (const child of [syslog, server]) {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  }
  tmp.cleanup();
});

describe('syslog-ng', () => {
  it('the docs configuration ships log lines that logs.all then serves', async () => {
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    await send(syslogPort, [`<14>1 ${at.toISOString()} web-1 billing 4242 - - invoice 17 sent`, `<11>1 ${at.toISOString()} web-1 billing 4242 - - invoice 18 failed`]);
    const rows = await delivered('my-host', 2);

    expect(rows.map((r) => r.event_message).sort(), syslogOutput).toEqual(['invoice 17 sent', 'invoice 18 failed']);
    const failed = rows.find((r) => r.event_message === 'invoice 18 failed');
    expect(failed.metadata).toMatchObject({ program: 'billing', severity: 'err' });
    expect(failed.id).toMatch(/^[0-9a-f-]{36}$/);
    // $ISODATE: the sent instant, whole seconds, with the host's offset read as such.
    expect(failed.timestamp).toBe(at.toISOString().replace('.000Z', '.000000Z'));
  });
});

/** Resolves once the port accepts a connection; rejects when syslog-ng exits first or after 60 s. */
async function listening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`syslog-ng exited with code ${child.exitCode}: ${syslogOutput}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`syslog-ng did not listen on ${port} within 60 s: ${syslogOutput}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends RFC 5424 messages over TCP, octet-counted (RFC 6587), as a syslog client does. */
async function send(port: number, messages: string[]): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  for (const message of messages) socket.write(`${Buffer.byteLength(message)} ${message}`);
  socket.end();
  await once(socket, 'close');
}

/** The project's logs.all rows once `lines` have arrived (syslog-ng sends a batch a second), or after 60 s. */
async function delivered(project: string, lines: number): Promise<any[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${url}/api/endpoints/logs.all?project=${project}&project_tier=FREE`, { headers: { 'X-API-KEY': KEY } });
    expect(response.status).toBe(200);
    const rows = ((await response.json()) as { result: any[] }).result;
    if (rows.length >= lines || Date.now() > deadline) return rows;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
