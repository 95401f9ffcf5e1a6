import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import { createEndpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { crc32, markerLine } from '../src/wal-format/commit-marker';
import { walDir } from '../src/managed/wal/wal-set';
import { memoryIO } from './support/cli';
import { listen } from './support/http';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { HANG_MS } from './support/hang-guard';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-ingest-cli-');
afterAll(() => tmp.cleanup());

let n = 0;
const dir = (name: string) => tmp.path(`${name}-${++n}`);

async function served(dataDir: string, project = 'abc'): Promise<string[]> {
  const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
  try {
    return (await ep.logsAll({ project, project_tier: 'FREE' })).map((r) => String(r.id)).sort();
  } finally {
    await ep.close();
  }
}

describe('log-endpoints ingest', () => {
  it('loads NDJSON files (plain and .gz) into a data dir in batches, with a progress bar', async () => {
    const dataDir = dir('data');
    const a = writeLines(
      tmp.path('a.ndjson'),
      Array.from({ length: 25 }, (_, i) => edgeEvent({ id: `a${String(i).padStart(2, '0')}`, timestamp: '2026-11-21T11:00:00Z' })),
    );
    const b = tmp.path('b.ndjson.gz');
    writeFileSync(b, gzipSync(`${JSON.stringify(edgeEvent({ id: 'b0', timestamp: '2026-11-21T11:00:01Z' }))}\n`));
    const { io, out } = memoryIO();
    const code = await main(['ingest', a, b, '--source', 'edge', '--data-dir', dataDir, '--batch-size', '10'], io, 'test');
    expect(out.stderr).toMatch(/Ingesting: 100%/);
    expect(code).toBe(0);
    expect(out.stdout).toMatch(/^Ingested 26 events from 2 files into .+ \(cloudflare\.logs\.prod\)\.\n$/);
    const ids = await served(dataDir);
    expect(ids).toHaveLength(26);
    expect(ids).toContain('b0');
  });

  it('skips lines that are not events and events the checks refuse, naming file and line; keeps the rest', async () => {
    const dataDir = dir('data');
    const file = writeLines(tmp.path('mixed.ndjson'), [
      edgeEvent({ id: 'ok1', timestamp: '2026-11-21T11:00:00Z' }),
      '{"broken": ',
      edgeEvent({ id: 'bad-ts', timestamp: 'not a time' }),
      '[1, 2]',
      edgeEvent({ id: 'ok2', timestamp: '2026-11-21T11:00:00Z' }),
    ]);
    const { io, out } = memoryIO();
    expect(await main(['ingest', file, '--source', 'edge', '--data-dir', dataDir], io, 'test')).toBe(0);
    expect(out.stderr).toContain(`${file}:2: not a JSON object; skipped.`);
    expect(out.stderr).toContain(`${file}:4: not a JSON object; skipped.`);
    expect(out.stderr).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3: "timestamp" "not a time" is not an ISO 8601 time.* Skipped\\.`));
    expect(out.stdout).toContain('Ingested 2 events');
    expect(out.stdout).toContain('3 lines were skipped (see above).');
    expect(await served(dataDir)).toEqual(['ok1', 'ok2']);
  });

  it('tells on stderr what recovery of the data dir set aside (docs/durability.md, "Checksums and damage")', async () => {
    const dataDir = dir('data');
    const file = writeLines(tmp.path('first.ndjson'), [edgeEvent({ id: 'first', timestamp: '2026-11-21T11:00:00Z' })]);
    expect(await main(['ingest', file, '--source', 'edge', '--data-dir', dataDir], memoryIO().io, 'test')).toBe(0);
    // The segment those events are in is damaged on disk, after a later one began.
    const segment = join(walDir(dataDir, 'edgeLogs'), '00000000000000000001.ndjson');
    const bytes = readFileSync(segment);
    bytes[2]! ^= 0x01;
    writeFileSync(segment, bytes);
    const later = `${JSON.stringify(edgeEvent({ id: 'later', timestamp: '2026-11-21T11:00:00Z' }))}\n`;
    writeFileSync(join(walDir(dataDir, 'edgeLogs'), '00000000000000000099.ndjson'), later + markerLine({ seq: 1, bytes: Buffer.byteLength(later), crc32: crc32(Buffer.from(later)) }));
    const { io, out } = memoryIO();
    expect(await main(['ingest', file, '--source', 'edge', '--data-dir', dataDir], io, 'test')).toBe(0);
    expect(out.stderr).toMatch(/^warning: \d+ bytes at offset 0 of 00000000000000000001\.ndjson do not match their group's checksum .* Kept in \S+-damaged-000000000000\.quarantined\.$/m);
  });

  it('refuses a data dir a running server holds, pointing at --url', async () => {
    const dataDir = dir('data');
    const holder = await createEndpoints({ storage: { dataDir } });
    const file = writeLines(tmp.path('one.ndjson'), [edgeEvent({ timestamp: '2026-11-21T11:00:00Z' })]);
    const { io, out } = memoryIO();
    expect(await main(['ingest', file, '--source', 'edge', '--data-dir', dataDir], io, 'test')).toBe(1);
    expect(out.stderr).toMatch(/^error \[overloaded\]: The data dir .+ is in use by this process.*--url <its URL> --api-key <key>\.\n$/);
    await holder.close();
  });

  it('sends to a running server with --url and an ingest key', async () => {
    const dataDir = dir('data');
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW) });
    const server = await listen(toNodeListener(createHandler(ep, { ingestKeys: ['shipper'] })));
    const file = writeLines(tmp.path('remote.ndjson'), [
      ...Array.from({ length: 5 }, (_, i) => edgeEvent({ id: `r${i}`, timestamp: '2026-11-21T11:00:00Z' })),
      edgeEvent({ id: 'bad', timestamp: 'nope' }),
    ]);
    const { io, out } = memoryIO({ LOG_ENDPOINTS_INGEST_KEYS: 'shipper' });
    expect(await main(['ingest', file, '--source', 'edge', '--url', server.url, '--batch-size', '4'], io, 'test')).toBe(0);
    expect(out.stdout).toContain(`Ingested 5 events from 1 file into ${server.url}`);
    expect(out.stderr).toContain(`${file}:6: "timestamp" "nope"`);
    expect((await ep.logsAll({ project: 'abc', project_tier: 'FREE' })).map((r) => r.id).sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    await server.close();
    await ep.close();
  });

  it.each([
    [['--source', 'edge', '--data-dir', 'x'], /Name the NDJSON files/],
    [
      ['f.ndjson', '--data-dir', 'x'],
      /--source must name a source: edgeLogs \(edge_logs, edge\), functionEdgeLogs \(function_edge_logs, functions\), or one of their Logflare names \(cloudflare\.logs\.prod, deno-relay-logs\)/,
    ],
    [['f.ndjson', '--source', 'edge'], /Give exactly one destination/],
    [['f.ndjson', '--source', 'edge', '--data-dir', 'x', '--url', 'http://127.0.0.1:1'], /Give exactly one destination/],
  ])('wrong usage %j is exit 2', async (args, message) => {
    const { io, out } = memoryIO();
    expect(await main(['ingest', ...args], io, 'test')).toBe(2);
    expect(out.stderr).toMatch(message);
  });
});

describe('log-endpoints serve --data-dir', () => {
  it('takes events with an ingest key, serves them to query keys, and releases the data dir on stop', async () => {
    const dataDir = dir('data');
    const { io, out, signal } = memoryIO({ LOG_ENDPOINTS_INGEST_KEYS: 'env-ingest' });
    const done = main(['serve', '--data-dir', dataDir, '--api-key', 'q', '--ingest-key', 'flag-ingest', '--port', '0', '--now', NOW], io, 'test');
    await expect.poll(() => out.stdout, { timeout: HANG_MS }).toMatch(/Ingest: POST/);
    const [, url] = /Listening on (http:\/\/\S+) \(1 key, 2 ingest keys\)/.exec(out.stdout)!;
    expect(out.stdout).toContain(`Ingest: POST ${url}/api/logs?source_name=cloudflare.logs.prod (or deno-relay-logs), kept in ${dataDir}`);
    const post = (key: string, id: string) =>
      fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, { method: 'POST', headers: { 'X-API-KEY': key }, body: JSON.stringify(edgeEvent({ id, timestamp: '2026-11-21T11:00:00Z' })) });
    expect((await post('env-ingest', 'i1')).status).toBe(200);
    expect((await post('flag-ingest', 'i2')).status).toBe(200);
    expect((await post('q', 'i3')).status).toBe(200);
    expect((await fetch(`${url}/api/endpoints/logs.all?project=abc&project_tier=FREE`, { headers: { 'X-API-KEY': 'flag-ingest' } })).status).toBe(401);
    signal('SIGINT');
    expect(await done).toBe(0);
    expect(await served(dataDir)).toEqual(['i1', 'i2', 'i3']);
  });

  it('a data dir in use is a clear error; ingest keys without a data dir are wrong usage', async () => {
    const dataDir = dir('data');
    const holder = await createEndpoints({ storage: { dataDir } });
    const busy = memoryIO();
    expect(await main(['serve', '--data-dir', dataDir, '--api-key', 'k', '--port', '0'], busy.io, 'test')).toBe(1);
    expect(busy.out.stderr).toMatch(/^error \[data_dir_locked\]: The data dir .+ is in use by this process/);
    await holder.close();
    const wrong = memoryIO();
    expect(await main(['serve', '--edge-logs', 'x.ndjson', '--ingest-key', 'k', '--port', '0'], wrong.io, 'test')).toBe(2);
    expect(wrong.out.stderr).toMatch(/Ingest keys need somewhere to keep events: add --data-dir/);
  });
});
