import { once } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { segmentSeqOf } from '../src/managed/wal/segment-name';
import { quarantineDir, walDir } from '../src/managed/wal/wal-set';
import { spawnCli, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-wal-damage-');
const children: ReturnType<typeof spawnCli>[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.cleanup();
});

async function start(dataDir: string) {
  const child = spawnCli(['serve', '--data-dir', dataDir, '--port', '0', '--now', NOW, '--no-cache', '--no-auth']);
  children.push(child);
  const url = (await waitForStdout(child, /Listening on (http:\/\/\S+) /))[1]!;
  return { child, url };
}

async function kill9(server: { child: ReturnType<typeof spawnCli> }) {
  server.child.kill('SIGKILL');
  await once(server.child, 'exit');
}

async function post(url: string, events: object[]) {
  const response = await fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(events) });
  return { status: response.status, body: await response.text() };
}

type Row = { id: string; timestamp: string; event_message: string };

/** Every event of a project logs.all serves, newest first, page by page (100 rows each; timestamps distinct). */
async function served(url: string, project: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (let end = ''; ; ) {
    const response = await fetch(`${url}/api/endpoints/logs.all?project=${encodeURIComponent(project)}&project_tier=PAYG${end ? `&iso_timestamp_end=${end}` : ''}`);
    expect(response.status).toBe(200);
    const page = ((await response.json()) as { result: Row[] }).result;
    rows.push(...page);
    if (page.length < 100) return rows;
    end = new Date(Date.parse(page.at(-1)!.timestamp) - 1).toISOString();
  }
}

/** The one segment file of the gateway log holding events (the newest one at the kill). */
function segmentWithEvents(dataDir: string): string {
  const dir = walDir(dataDir, 'edgeLogs');
  const names = readdirSync(dir).filter((n) => segmentSeqOf(n) !== null && readFileSync(join(dir, n)).length > 0);
  expect(names).toHaveLength(1);
  return join(dir, names[0]!);
}

/** Where each group of a segment starts (groups end with their marker line). */
function groupStarts(path: string): number[] {
  const text = readFileSync(path, 'latin1');
  const starts = [0];
  for (let at = text.indexOf('{"_wal_commit"'); at >= 0; at = text.indexOf('{"_wal_commit"', at + 1)) starts.push(text.indexOf('\n', at) + 1);
  return starts.slice(0, -1);
}

describe('what a killed server acknowledged is served after a restart (docs/durability.md)', () => {
  it('events with a lone surrogate or a timestamp form DuckDB reads only by the rule are acknowledged, served, and served again from the files after kill -9', async () => {
    const dataDir = tmp.path('poison');
    const events = [
      { id: 'surrogate', timestamp: '2026-11-21T10:00:00Z', message: `cut ${'😀'.slice(0, 1)} emoji`, project: 'poison', metadata: { ['k\udc00']: 'v\ud800' } },
      { id: 'comma', timestamp: '2026-11-21T10:00:00,5Z', message: 'comma', project: 'poison' },
      { id: 'no-seconds', timestamp: '2026-11-21T10:01Z', message: 'minutes', project: 'poison' },
      { id: 'lower-z', timestamp: '2026-11-21T10:02:00z', message: 'lower z', project: 'poison' },
    ];
    const expected = [
      { id: 'lower-z', timestamp: '2026-11-21T10:02:00.000000Z', event_message: 'lower z' },
      { id: 'no-seconds', timestamp: '2026-11-21T10:01:00.000000Z', event_message: 'minutes' },
      { id: 'comma', timestamp: '2026-11-21T10:00:00.500000Z', event_message: 'comma' },
      { id: 'surrogate', timestamp: '2026-11-21T10:00:00.000000Z', event_message: 'cut \ufffd emoji' },
    ];
    const first = await start(dataDir);
    expect(await post(first.url, events)).toEqual({ status: 200, body: '{"message":"Logged!"}' });
    expect((await served(first.url, 'poison')).map(({ id, timestamp, event_message }) => ({ id, timestamp, event_message }))).toEqual(expected);
    await kill9(first);
    // Read back from the write-ahead files this time (nothing is in memory after a restart).
    const second = await start(dataDir);
    expect((await served(second.url, 'poison')).map(({ id, timestamp, event_message }) => ({ id, timestamp, event_message }))).toEqual(expected);
    second.child.kill('SIGTERM');
    await once(second.child, 'exit');
    expect(readdirSync(tmp.path('poison', 'edgeLogs'))).not.toContain('quarantine');
  });

  for (const [name, damage, lost] of [
    ['one changed byte in group 3 of 10', (bytes: Buffer, starts: number[]) => void (bytes[starts[2]! + 40]! ^= 0x01), [3]],
    ['512 zero bytes over group 2 of 10', (bytes: Buffer, starts: number[]) => void bytes.fill(0, starts[1]! + 20, starts[1]! + 532), [2]],
  ] as const) {
    it(`${name} of the segment a kill -9 left: only the damaged group is lost, set aside in the quarantine and told`, async () => {
      const dataDir = tmp.path(name.replaceAll(' ', '-'));
      const first = await start(dataDir);
      // Ten requests one after the other: ten groups of 20 events (about 2.5 KB each).
      for (let g = 1; g <= 10; g++) {
        const events = Array.from({ length: 20 }, (_, i) => ({
          id: `g${String(g).padStart(2, '0')}-${String(i).padStart(2, '0')}`,
          timestamp: `2026-11-21T10:${String(g).padStart(2, '0')}:${String(i).padStart(2, '0')}Z`,
          message: `GET /rest/v1/items/${i}`,
          project: 'groups',
        }));
        expect((await post(first.url, events)).status).toBe(200);
      }
      await kill9(first);
      const path = segmentWithEvents(dataDir);
      const starts = groupStarts(path);
      expect(starts).toHaveLength(10);
      const bytes = readFileSync(path);
      damage(bytes, starts);
      writeFileSync(path, bytes);

      const second = await start(dataDir);
      const ids = (await served(second.url, 'groups')).map((r) => r.id);
      const groups = [...new Set(ids.map((id) => Number(id.slice(1, 3))))].sort((a, b) => a - b);
      expect(groups).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].filter((g) => !(lost as readonly number[]).includes(g)));
      expect(ids).toHaveLength(180);
      const [file] = readdirSync(quarantineDir(dataDir, 'edgeLogs'));
      expect(file).toMatch(/-damaged-\d{12}\.quarantined$/);
      const quarantined = readFileSync(join(quarantineDir(dataDir, 'edgeLogs'), file!));
      expect(quarantined.subarray(quarantined.indexOf(0x0a) + 1)).toEqual(bytes.subarray(starts[lost[0]! - 1]!, starts[lost[0]!]!));
      expect(second.child.output.stderr).toMatch(
        /warning: \d+ bytes at offset \d+ of \d{20}\.ndjson do not match their group's checksum \(changed on disk\); the groups around them are intact and kept\. Kept in \S+\.quarantined\./,
      );
      expect(second.child.output.stderr).not.toMatch(/never acknowledged/);
      second.child.kill('SIGTERM');
      const [code] = await once(second.child, 'exit');
      expect(code).toBe(0);
    });
  }
});
