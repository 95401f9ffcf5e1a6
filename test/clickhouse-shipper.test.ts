/**
 * Managed storage's ClickHouse shipper without a server: the position bookkeeping (which line of
 * which segment each row is), retries that send only what is missing, a restart after a crash in
 * the middle of a segment, and the bounds and warnings while ClickHouse is unreachable. The
 * segments are real WAL segments, read by the loader's real DuckDB reading; the table is a map.
 * The same paths against a real 2-shard cluster, killed with SIGKILL, are in
 * test/integration/clickhouse-ingest.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoints, EngineError, InvalidOptionError, type EndpointsWarning } from '../src/index';
import { clickhouseEngine, clickhouseLoader } from '../src/clickhouse';
import type { ClickHouseLoader, SegmentRows } from '../src/engine/clickhouse/clickhouse-loader';
import type { SourceName } from '../src/engine/engine';
import { ClickHouseShipper, type ShipTarget } from '../src/managed/clickhouse-shipper';
import { dataDirInstanceId } from '../src/managed/instance-id';
import { assignOffsets, eventLinesOf } from '../src/managed/segment-lines';
import { Wal } from '../src/managed/wal/wal';
import { censusEvents } from './support/census';
import { edgeEvent, tempDir } from './support/log-files';
import { waitUntil } from './support/hang-guard';

const tmp = tempDir('le-shipper-');
const readers: ClickHouseLoader[] = [];
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  tmp.cleanup();
});

let n = 0;
const freshDir = () => tmp.path(`case-${++n}`);
const jsonLines = (events: readonly object[]) => Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));

/**
 * A table in memory standing for ClickHouse: rows by segment and offset (a position inserted twice
 * is counted, so duplicates show), every call recorded, and failures on demand. Segments are read
 * by a real loader (DuckDB only: it never connects to a server).
 */
class MemoryTable implements ShipTarget {
  readonly rows = new Map<string, Map<number, { count: number; row: unknown[] }>>();
  readonly calls: string[] = [];
  /** The next insert stores this many rows, then fails (a partial insert); null: no failure. */
  failInsertAfter: number | null = null;
  /** Inserts fail outright while set (ClickHouse down). */
  down = false;
  private readonly reader: ClickHouseLoader;

  constructor(readonly batchRows?: number) {
    this.reader = clickhouseLoader({ url: 'http://127.0.0.1:9', database: 'unused' });
    readers.push(this.reader);
  }

  readSegment(source: SourceName, file: string): Promise<SegmentRows> {
    return this.reader.readSegment(source, file);
  }

  /** ClickHouse's own classification, as the loader (the real target) makes it. */
  isStillRunning(error: unknown): boolean {
    return this.reader.isStillRunning(error);
  }

  async shippedOffsets(_source: SourceName, segment: string, range: { first: bigint; last: bigint }, queryId: string) {
    this.calls.push(`positions ${segment} ${queryId}`);
    if (this.down) throw new Error('connect ECONNREFUSED');
    const out = new Set<number>();
    for (const [offset, { row }] of this.rows.get(segment) ?? []) {
      const t = row[0] as bigint;
      if (t >= range.first && t <= range.last) out.add(offset);
    }
    return out;
  }

  async insertAt(_source: SourceName, segment: string, rows: readonly unknown[][], offsets: readonly number[]) {
    this.calls.push(`insert ${segment} ${rows.length}`);
    if (this.down) throw new Error('connect ECONNREFUSED');
    const keep = this.failInsertAfter ?? rows.length;
    const table = this.rows.get(segment) ?? new Map();
    this.rows.set(segment, table);
    for (let i = 0; i < Math.min(keep, rows.length); i++) {
      const at = table.get(offsets[i]!);
      table.set(offsets[i]!, { count: (at?.count ?? 0) + 1, row: rows[i]! });
    }
    if (this.failInsertAfter !== null) {
      this.failInsertAfter = null;
      throw new Error(`insert broke off after ${keep} rows`);
    }
  }

  /** Every stored event id, once per stored copy, sorted. */
  ids(): string[] {
    const out: string[] = [];
    for (const table of this.rows.values()) for (const { count, row } of table.values()) for (let k = 0; k < count; k++) out.push(String(row[2]));
    return out.sort();
  }

  /** Every stored position as `segment@offset`, once per copy. */
  positions(): string[] {
    const out: string[] = [];
    for (const [segment, table] of this.rows) for (const [offset, { count }] of table) for (let k = 0; k < count; k++) out.push(`${segment}@${offset}`);
    return out.sort();
  }
}

/** A scheduler whose tasks run when the test says so, with the delays they asked for. */
function manualScheduler() {
  const tasks: Array<{ delayMs: number; task: () => Promise<void> }> = [];
  return {
    tasks,
    scheduler: {
      schedule(delayMs: number, task: () => Promise<void>) {
        const item = { delayMs, task };
        tasks.push(item);
        return () => {
          const at = tasks.indexOf(item);
          if (at >= 0) tasks.splice(at, 1);
        };
      },
    },
    /** Runs the one pending task. */
    async runNext() {
      expect(tasks).toHaveLength(1);
      await tasks.shift()!.task();
    },
  };
}

/** The byte offsets of the event lines of a segment file, found by splitting it by hand. */
function eventOffsets(path: string): number[] {
  const text = readFileSync(path);
  const out: number[] = [];
  let at = 0;
  for (const line of text.toString('utf8').split('\n')) {
    if (line !== '' && !line.startsWith('{"_wal_commit"')) out.push(at);
    at += Buffer.byteLength(line) + 1;
  }
  return out;
}

async function openWal(dir: string) {
  return Wal.open({ dir: join(dir, 'edgeLogs', 'wal'), maxSegmentAgeMs: 3_600_000 });
}

function shipperOf(dir: string, wal: Wal, table: ShipTarget, extra: Partial<ConstructorParameters<typeof ClickHouseShipper>[0]> = {}) {
  const errors: unknown[] = [];
  const shipper = new ClickHouseShipper({
    source: 'edgeLogs',
    wal,
    stateDir: join(dir, 'edgeLogs', 'shipping'),
    instanceId: 'a'.repeat(32),
    target: table,
    onError: (error) => errors.push(error),
    ...extra,
  });
  return { shipper, errors };
}

describe('segment lines and positions', () => {
  it('lists the event lines of a segment by byte offset, markers and blank lines left out', () => {
    const bytes = Buffer.from('{"id":"a","timestamp":1}\n' + '{"_wal_commit":{"seq":1,"bytes":25,"crc32":1}}\n' + '\n' + '{"timestamp":2,"id":"b\\"c"}\n' + 'not json\n' + '{"id":"é","x":1}');
    expect(eventLinesOf(bytes)).toEqual([
      { offset: 0, id: 'a' },
      { offset: 73, id: 'b"c' },
      { offset: 101, id: null },
      { offset: 110, id: 'é' },
    ]);
  });

  it('pairs rows with lines in order (checked by id), or gives each row the next line with its id when lines were left out', () => {
    const lines = [
      { offset: 0, id: 'x' },
      { offset: 10, id: null },
      { offset: 20, id: 'x' },
      { offset: 30, id: 'y' },
    ];
    // One row per line (a line that is not JSON reads as NULLs): in order, whatever the ids share.
    expect(assignOffsets(lines, ['x', null, 'x', 'y'])).toEqual({ offsets: [0, 10, 20, 30], unread: 0 });
    expect(() => assignOffsets(lines, ['x', null, 'y', 'x'])).toThrow(/has the id "y", its line "x"/);
    expect(assignOffsets(lines, ['x', 'x', 'y'])).toEqual({ offsets: [0, 20, 30], unread: 1 });
    expect(assignOffsets(lines, ['x', 'y'])).toEqual({ offsets: [0, 30], unread: 2 });
    expect(() => assignOffsets(lines, ['y', 'x'])).toThrow(/matches none/);
  });

  it('keeps one instance id per data dir, and refuses a damaged one', async () => {
    const dir = freshDir();
    const first = await dataDirInstanceId(dir);
    expect(first).toMatch(/^[0-9a-f]{32}$/);
    expect(await dataDirInstanceId(dir)).toBe(first);
    expect(await dataDirInstanceId(freshDir())).not.toBe(first);
    writeFileSync(join(dir, 'instance-id'), 'garbage\n');
    await expect(dataDirInstanceId(dir)).rejects.toThrow(/damaged/);
  });
});

describe('ClickHouseShipper', () => {
  it('hands the lines no query reads to setAside (the quarantine) before it releases their segment', async () => {
    const dir = freshDir();
    const wal = await openWal(dir);
    const good = censusEvents('u', 2);
    await wal.append(Buffer.concat([jsonLines([good[0]!]), Buffer.from('{"id":"lost","timestamp":"2026-1-2T10:00:00Z"}\nnot json\n'), jsonLines([good[1]!])]));
    await wal.roll();
    const [segment] = wal.closedSegments();
    const offsets = eventOffsets(segment!.path);
    const table = new MemoryTable();
    const setAside: Array<{ path: string; offsets: number[]; present: boolean }> = [];
    const { shipper, errors } = shipperOf(dir, wal, table, {
      setAside: async (path, at) => void setAside.push({ path, offsets: at, present: existsSync(path) }),
    });
    shipper.trigger();
    await shipper.settled();
    expect(errors).toEqual([]);
    expect(setAside).toEqual([{ path: segment!.path, offsets: [offsets[1]!, offsets[2]!], present: true }]);
    expect(table.ids()).toEqual(good.map((e) => String(e.id)).sort());
    expect(existsSync(segment!.path)).toBe(false);
    await shipper.stop();
    await wal.close();
  });

  it('ships each closed segment once, every row at its own line, then releases it', async () => {
    const dir = freshDir();
    const wal = await openWal(dir);
    const table = new MemoryTable();
    const { shipper, errors } = shipperOf(dir, wal, table);
    const events = censusEvents('s', 30);
    // Two events share an id: both are kept (ids are not keys).
    events[7]!.id = events[6]!.id;
    await wal.append(jsonLines(events.slice(0, 12)));
    await wal.append(jsonLines(events.slice(12, 20)));
    await wal.roll();
    await wal.append(jsonLines(events.slice(20)));
    await wal.roll();
    const closed = wal.closedSegments();
    expect(closed).toHaveLength(2);
    const expected = closed.flatMap((s) => eventOffsets(s.path).map((o) => `${'a'.repeat(32)}/edgeLogs/${s.seq}@${o}`)).sort();

    shipper.trigger();
    await shipper.settled();
    expect(errors).toEqual([]);
    expect(table.ids()).toEqual(events.map((e) => e.id as string).sort());
    expect(table.positions()).toEqual(expected);
    // Never sent before: sent whole, without asking what is there.
    expect(table.calls.filter((c) => c.startsWith('positions'))).toEqual([]);
    expect(wal.closedSegments()).toEqual([]);
    expect(closed.some((s) => existsSync(s.path))).toBe(false);
    expect(readdirSync(join(dir, 'edgeLogs', 'shipping'))).toEqual([]);
    expect(shipper.counters).toMatchObject({ shippedSegments: 2, shippedEvents: 30, failures: 0, skippedLines: 0 });
    await shipper.stop();
    await wal.close();
  });

  it('retries a broken insert after a pause that doubles, asking first and sending only the missing lines', async () => {
    const dir = freshDir();
    const wal = await openWal(dir);
    const table = new MemoryTable(4);
    const clock = manualScheduler();
    const { shipper, errors } = shipperOf(dir, wal, table, { scheduler: clock.scheduler, retryFirstMs: 1000, retryMaxMs: 3000 });
    const events = censusEvents('r', 10);
    await wal.append(jsonLines(events));
    await wal.roll();
    const [segment] = wal.closedSegments();
    const id = shipper.segmentId(segment!.seq);

    // The second batch of four breaks off after two rows: six rows of ten are in the table.
    table.calls.length = 0;
    let inserts = 0;
    const insertAt = table.insertAt.bind(table);
    table.insertAt = async (...args) => {
      if (++inserts === 2) table.failInsertAfter = 2;
      return insertAt(...args);
    };
    shipper.trigger();
    await shipper.settled();
    expect(errors.map(String)).toEqual(['Error: insert broke off after 2 rows']);
    expect(table.ids()).toHaveLength(6);
    expect(existsSync(segment!.path)).toBe(true);
    expect(clock.tasks.map((t) => t.delayMs)).toEqual([1000]);

    // A segment closing meanwhile waits for the pause; ClickHouse is down at the retry.
    table.down = true;
    shipper.trigger();
    expect(clock.tasks).toHaveLength(1);
    await clock.runNext();
    expect(clock.tasks.map((t) => t.delayMs)).toEqual([2000]);
    await clock.runNext();
    expect(clock.tasks.map((t) => t.delayMs)).toEqual([3000]);
    expect(errors).toHaveLength(3);

    table.down = false;
    table.calls.length = 0;
    await clock.runNext();
    expect(table.calls).toEqual([`positions ${id} log-endpoints-ship-${'a'.repeat(32)}-edgeLogs-${segment!.seq}`, `insert ${id} 4`]);
    expect(table.ids()).toEqual(events.map((e) => e.id as string).sort());
    expect(new Set(table.positions()).size).toBe(10);
    expect(existsSync(segment!.path)).toBe(false);
    expect(clock.tasks).toEqual([]);
    expect(shipper.counters).toMatchObject({ shippedSegments: 1, failures: 3 });
    await shipper.stop();
    await wal.close();
  });

  it('after a crash in the middle of a segment, the next process completes it exactly', async () => {
    const dir = freshDir();
    const events = censusEvents('c', 25);
    const table = new MemoryTable(10);
    {
      const wal = await openWal(dir);
      await wal.append(jsonLines(events.slice(0, 15)));
      await wal.append(jsonLines(events.slice(15)));
      await wal.roll();
      // The process "dies" after the first batch: the attempt is recorded, ten rows are in.
      const { shipper } = shipperOf(dir, wal, table, { scheduler: manualScheduler().scheduler });
      table.failInsertAfter = null;
      let inserts = 0;
      const insertAt = table.insertAt.bind(table);
      table.insertAt = async (...args) => {
        if (++inserts === 2) throw new Error('killed');
        return insertAt(...args);
      };
      shipper.trigger();
      await shipper.settled();
      await shipper.stop();
      await wal.close();
      table.insertAt = insertAt;
    }
    expect(table.ids()).toHaveLength(10);
    expect(readdirSync(join(dir, 'edgeLogs', 'shipping'))).toHaveLength(1);

    // Restart: recovery, then the segment is completed with the fifteen missing lines.
    const wal = await openWal(dir);
    table.calls.length = 0;
    const { shipper, errors } = shipperOf(dir, wal, table);
    shipper.trigger();
    await shipper.settled();
    expect(errors).toEqual([]);
    expect(table.calls.map((c) => c.split(' ')[0] + ' ' + (c.split(' ')[2] ?? ''))).toEqual(['positions log-endpoints-ship-' + 'a'.repeat(32) + '-edgeLogs-1', 'insert 10', 'insert 5']);
    expect(table.ids()).toEqual(events.map((e) => e.id as string).sort());
    expect(new Set(table.positions()).size).toBe(25);
    expect(wal.closedSegments()).toEqual([]);
    expect(readdirSync(join(dir, 'edgeLogs', 'shipping'))).toEqual([]);
    await shipper.stop();
    await wal.close();
  });

  it('waits while an insert of the segment sent by a killed process still runs on the server', async () => {
    const dir = freshDir();
    const wal = await openWal(dir);
    const table = new MemoryTable();
    const clock = manualScheduler();
    const { shipper, errors } = shipperOf(dir, wal, table, { scheduler: clock.scheduler });
    await wal.append(jsonLines(censusEvents('w', 4)));
    await wal.roll();
    const [segment] = wal.closedSegments();
    // The attempt was recorded by the previous process, whose insert ClickHouse is still running.
    mkdirSync(join(dir, 'edgeLogs', 'shipping'), { recursive: true });
    writeFileSync(join(dir, 'edgeLogs', 'shipping', `${segment!.seq}.shipping`), '');
    const shippedOffsets = table.shippedOffsets.bind(table);
    table.shippedOffsets = async () => {
      throw new Error('Code: 216, e.displayText() = DB::Exception: Query with id = log-endpoints-ship-x is already running., e.what() = DB::Exception');
    };
    shipper.trigger();
    await shipper.settled();
    expect(errors.map((e) => (e as Error).message)).toEqual([`segment ${segment!.seq}: an insert of it sent before (by a process that stopped) still runs on the server; asking again later`]);
    expect(table.calls.filter((c) => c.startsWith('insert'))).toEqual([]);
    table.shippedOffsets = shippedOffsets;
    await clock.runNext();
    expect(table.ids()).toHaveLength(4);
    expect(wal.closedSegments()).toEqual([]);
    await shipper.stop();
    await wal.close();
  });

  it('leaves out lines that cannot be read, and the other lines keep their own positions', async () => {
    const dir = freshDir();
    const wal = await openWal(dir);
    const table = new MemoryTable();
    const { shipper, errors } = shipperOf(dir, wal, table);
    const [a, b] = [edgeEvent({ id: 'a', timestamp: '2026-11-21T10:00:00Z' }), edgeEvent({ id: 'b', timestamp: '2026-11-21T10:00:01Z' })];
    // A line that is not JSON and one whose timestamp no reading accepts (written by hand: ingest refuses both).
    await wal.append(Buffer.from(`${JSON.stringify(a)}\n{"id":"broken", "timestamp":\n${JSON.stringify({ ...b, id: 'late', timestamp: 'whenever' })}\n${JSON.stringify(b)}\n`));
    await wal.roll();
    const [segment] = wal.closedSegments();
    const offsets = eventOffsets(segment!.path);
    shipper.trigger();
    await shipper.settled();
    expect(errors).toEqual([]);
    expect(table.ids()).toEqual(['a', 'b']);
    expect(table.positions()).toEqual([offsets[0], offsets[3]].map((o) => `${shipper.segmentId(segment!.seq)}@${o}`));
    expect(shipper.counters).toMatchObject({ shippedEvents: 2, skippedLines: 2 });
    await shipper.stop();
    await wal.close();
  });
});

describe('storage.clickhouse in createEndpoints', () => {
  it('needs the ClickHouse engine, and leaves retention to ClickHouse', async () => {
    const clickhouse = { url: 'http://127.0.0.1:9', database: 'logs' };
    await expect(createEndpoints({ storage: { dataDir: freshDir(), clickhouse } })).rejects.toMatchObject({ code: 'invalid_option', option: 'engine' });
    const engine = clickhouseEngine(clickhouse);
    await expect(createEndpoints({ storage: { dataDir: freshDir(), clickhouse, retentionDays: 30 }, engine })).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(createEndpoints({ storage: { dataDir: freshDir(), clickhouse: { database: 'logs' } as never }, engine })).rejects.toMatchObject({ option: 'storage.clickhouse' });
    await engine.close();
  });

  it('while ClickHouse is unreachable: warns shipping_failed, keeps accepting events, then answers overloaded past maxUncompactedBytes', async () => {
    const port = await closedPort();
    const clickhouse = { url: `http://127.0.0.1:${port}`, database: 'logs' };
    const warnings: EndpointsWarning[] = [];
    const dataDir = freshDir();
    const ep = await createEndpoints({
      storage: { dataDir, clickhouse, maxSegmentBytes: 2048, maxUncompactedBytes: 16 * 1024 },
      engine: clickhouseEngine(clickhouse),
      onWarning: (w) => warnings.push(w),
    });
    let accepted = 0;
    let refused: unknown = null;
    try {
      for (let batch = 0; batch < 200 && refused === null; batch++) {
        try {
          await ep.ingest('cloudflare.logs.prod', censusEvents(`u${batch}`, 5));
          accepted += 5;
        } catch (error) {
          refused = error;
        }
      }
      expect(accepted).toBeGreaterThan(0);
      expect(refused).toBeInstanceOf(EngineError);
      expect(refused).toMatchObject({ code: 'overloaded', status: 503 });
      await waitUntil(() => warnings.some((w) => w.code === 'shipping_failed'));
      const warning = warnings.find((w) => w.code === 'shipping_failed')!;
      expect(warning).toMatchObject({ code: 'shipping_failed', source: 'edgeLogs' });
      expect(warning.message).toMatch(/^Shipping edgeLogs to ClickHouse failed \(retried shortly\)/);
      expect(ep.stats().storage).toMatchObject({ shippedSegments: 0 });
      expect(ep.stats().storage!.shippingFailures).toBeGreaterThan(0);
      expect(ep.stats().storage!.walBytes).toBeGreaterThan(0);
    } finally {
      await ep.close();
    }
    // Nothing was lost: every accepted event is still in the data dir, waiting to be shipped.
    const wal = await openWal(dataDir);
    let stored = 0;
    for (const s of wal.closedSegments()) stored += eventOffsets(s.path).length;
    expect(stored).toBe(accepted);
    await wal.close();
  });
});

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
