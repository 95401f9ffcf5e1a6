import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createEndpoints } from '../src/index';
import { createHandler } from '../src/http';
import { toNodeListener } from '../src/node';
import { walDir } from '../src/managed/wal/wal-set';
import { HANG_MS } from './support/hang-guard';
import { listen } from './support/http';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-big-integers-');
afterAll(() => tmp.cleanup());

/** Integers past 2^53 (and past 2^64) as sent: each must come back with exactly these digits. */
const BIG = ['9007199254740993', '-9007199254740993', '18446744073709551617', '123456789012345678901234567890', '-123456789012345678901234567891'];

/** The body as a shipper sends it: big integers in metadata (nested objects and arrays) and at the top level. */
const BODY =
  `[{"message":"big","project":"big","timestamp":"2026-11-21T11:00:00Z","top":${BIG[0]},"top_list":[${BIG[3]},1],` +
  `"metadata":{"a":${BIG[0]},"b":${BIG[1]},"nested":{"c":${BIG[2]},"list":[${BIG[3]},{"d":${BIG[4]}}]},"small":12,"float":1.5}}]`;

/** Every big integer with its digits, as a JSON text holds it. */
function expectExact(text: string): void {
  for (const digits of BIG) expect(text).toMatch(new RegExp(`[^0-9]${digits.replace('-', '\\-')}[^0-9.e]`));
}

describe('integers past 2^53 are kept as sent (docs/ingest.md, "Requests")', () => {
  it('from the ingest body through the WAL, memory and compaction to every answer format', async () => {
    const dataDir = tmp.path('data');
    // Each segment closes 1 ms after its first event, so compaction takes it at once.
    const ep = await createEndpoints({ storage: { dataDir, maxSegmentAgeMs: 1 }, now: () => new Date(NOW), cache: false });
    const server = await listen(toNodeListener(createHandler(ep, { auth: false })));
    try {
      const ingest = await fetch(`${server.url}/api/logs?source_name=cloudflare.logs.prod`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: BODY });
      expect(ingest.status).toBe(200);

      // The write-ahead log holds the event with every integer as sent, top-level fields included.
      const wal = walDir(dataDir, 'edgeLogs');
      const stored = readdirSync(wal)
        .map((f) => readFileSync(join(wal, f), 'utf8'))
        .join('');
      expectExact(stored);
      expect(stored).toContain(`"top":${BIG[0]},"top_list":[${BIG[3]},1]`);

      const answers = async () => {
        const url = `${server.url}/api/endpoints/logs.all?project=big&project_tier=ENTERPRISE`;
        const as = (accept: string) => fetch(url, { headers: { Accept: accept } });
        const json = await (await as('application/json')).text();
        const ndjson = await (await as('application/x-ndjson')).text();
        const csv = await (await as('text/csv')).text();
        const arrow = tableFromIPC(new Uint8Array(await (await as('application/vnd.apache.arrow.stream')).arrayBuffer()));
        return { json, ndjson, csv, arrow: String(arrow.getChild('metadata')!.get(0)) };
      };
      // Read from memory (not compacted yet, or compacted: each event is read once either way).
      for (const text of Object.values(await answers())) expectExact(text);
      // The library's rows give them as bigint.
      const [row] = (await ep.logsAll({ project: 'big', project_tier: 'ENTERPRISE' })) as unknown as Array<{ metadata: { a: unknown; nested: { list: unknown[] }; small: unknown } }>;
      expect(row!.metadata.a).toBe(9007199254740993n);
      expect(row!.metadata.nested.list[0]).toBe(123456789012345678901234567890n);
      expect(row!.metadata.small).toBe(12);

      // Compacted to Parquet: the metadata's JSON text there holds them too, and the answers still do.
      await vi.waitFor(() => expect(ep.stats().storage?.compactedSegments).toBeGreaterThan(0), { timeout: HANG_MS, interval: 10 });
      const duck = await DuckDBInstance.create(':memory:');
      const connection = await duck.connect();
      const parquet = (await connection.runAndReadAll(`SELECT metadata::VARCHAR FROM read_parquet('${join(dataDir, 'edgeLogs', 'parquet')}/date=*/*.parquet')`)).getRows();
      connection.closeSync();
      duck.closeSync();
      expect(parquet).toHaveLength(1);
      expectExact(` ${String(parquet[0]![0])} `);
      for (const text of Object.values(await answers())) expectExact(text);
    } finally {
      await server.close();
      await ep.close();
    }
  });

  it('ep.ingest takes bigint values and stores their digits', async () => {
    const dataDir = tmp.path('lib');
    const ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), cache: false });
    try {
      await ep.ingest('edgeLogs', [{ message: 'big', project: 'lib', timestamp: '2026-11-21T11:00:00Z', metadata: { n: 9007199254740993n } }]);
      const [row] = (await ep.logsAll({ project: 'lib', project_tier: 'ENTERPRISE' })) as unknown as Array<{ metadata: { n: unknown } }>;
      expect(row!.metadata.n).toBe(9007199254740993n);
    } finally {
      await ep.close();
    }
  });
});
