import { existsSync, linkSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEndpoints, DrainLog, openDrains, type Drains, type Endpoints } from '../src/index';
import { createHandler } from '../src/http/create-handler';
import { KEPT_DIR } from '../src/drains/drain-log';
import { census, CENSUS_NOW, censusEvents, idRange } from './support/census';
import { drainReceiver } from './support/drain-receiver';
import { waitUntil } from './support/hang-guard';
import { tempDir } from './support/log-files';

/** A gate a held retry waits on. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Segments of 8 KiB: every other batch of 20 gateway events closes one, and compaction takes it. */
const SEGMENT_BYTES = 8 * 1024;

describe('segments kept for log drains', () => {
  let tmp: ReturnType<typeof tempDir>;
  let sink: Awaited<ReturnType<typeof drainReceiver>>;
  let ep: Endpoints | undefined;
  let drains: Drains | undefined;
  const warnings: string[] = [];

  async function start(options: { maxBacklogBytes?: number; sleep?: (ms: number) => Promise<void> } = {}) {
    const log = new DrainLog({ maxBacklogBytes: options.maxBacklogBytes });
    ep = await createEndpoints({ storage: { dataDir: tmp.dir, maxSegmentBytes: SEGMENT_BYTES }, now: () => new Date(CENSUS_NOW), cache: false, segmentKeeper: log });
    drains = await openDrains({ dataDir: tmp.dir, sources: ep.sources, log, sleep: options.sleep ?? (async () => undefined), onWarning: (w) => warnings.push(w.message) });
    return { ep, drains };
  }

  async function stop() {
    drains?.close();
    drains = undefined;
    await ep?.close();
    ep = undefined;
  }

  async function webhook(drains: Drains) {
    const drain = await drains.store.create({ name: 'hook', type: 'webhook', config: { url: `${sink.url}/hook` } });
    await drains.store.addRule({ backend_id: drain.id, lql_string: '~".*?"', source_id: drains.store.source('edgeLogs').logflare.id });
    return drain;
  }

  /** Ingests `batches` batches of 20 gateway events, `${prefix}-0` ... */
  async function ingest(ep: Endpoints, prefix: string, batches: number) {
    for (let b = 0; b < batches; b++) await ep.ingest('edgeLogs', censusEvents(prefix, 20, b * 20));
  }

  /** The ids of the requests the receiver took (2xx), in order: failed attempts carry the same events again. */
  const taken = () => sink.received.flatMap((r, i) => (statuses[i]! < 300 ? (JSON.parse(r.body.toString('utf8')) as { id: string }[]).map((e) => e.id) : []));
  const statuses: number[] = [];
  const answer = (status: (i: number) => number) => sink.answer((i) => (statuses[i] = status(i)));

  const keptFiles = () => {
    const dir = tmp.path('edgeLogs', KEPT_DIR);
    return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.ndjson')) : [];
  };
  const walFiles = () => readdirSync(tmp.path('edgeLogs', 'wal')).filter((n) => n.endsWith('.ndjson'));
  const keptBytes = () => keptFiles().reduce((n, f) => n + statSync(tmp.path('edgeLogs', KEPT_DIR, f)).size, 0);

  beforeEach(async () => {
    tmp = tempDir('le-drains-kept-');
    sink = await drainReceiver();
    warnings.length = 0;
    statuses.length = 0;
  });
  afterEach(async () => {
    await stop();
    await sink.close();
    tmp.cleanup();
  });

  it('past the backlog bound the oldest kept segment is deleted, its undelivered events counted as dropped (stats, /health, /metrics, the log); the newest are sent once the receiver is back', async () => {
    const retry = gate();
    const bound = 3 * SEGMENT_BYTES;
    const { ep, drains } = await start({ maxBacklogBytes: bound, sleep: () => retry.opened });
    await webhook(drains);
    // The receiver is down: the first batch fails and waits for its retry; the log grows behind it.
    answer((i) => (i === 0 ? 503 : 200));
    await ingest(ep, 'b', 20);
    // Every closed segment compacted (the log holds its active one only), the oldest kept ones dropped.
    await waitUntil(() => walFiles().length === 1 && drains.stats()[0]!.dropped > 0);
    // What is kept for the drain stays within the bound, however long the receiver stays down.
    expect(keptBytes()).toBeLessThanOrEqual(bound);
    expect(keptFiles().length).toBeGreaterThan(0);
    const { dropped } = drains.stats()[0]!;
    expect(warnings.some((w) => w.startsWith(`Log drain hook (webhook): dropped `) && w.includes(`its backlog in edgeLogs passed ${bound} bytes`))).toBe(true);
    const handler = createHandler(ep, { apiKeys: ['k'], drains });
    const health = JSON.parse(await (await handler(new Request('http://analytics:4000/health'))).text()) as { degraded: string[]; drains: { dropped: number }[] };
    expect(health).toMatchObject({ status: 'ok', degraded: ['drains'], drains: [{ id: 1, type: 'webhook', dropped }] });
    const metrics = await (await handler(new Request('http://analytics:4000/metrics', { headers: { 'X-API-KEY': 'k' } }))).text();
    expect(metrics).toContain(`log_endpoints_drain_dropped_events_total{drain="1",name="hook",type="webhook"} ${dropped}\n`);

    retry.open();
    await drains.idle();
    const ids = taken();
    const stats = drains.stats()[0]!;
    // Every event is sent or counted as dropped, none both.
    expect(stats.sent).toBe(ids.length);
    expect(stats.sent + stats.dropped).toBe(400);
    expect(new Set(ids).size).toBe(ids.length);
    // In order: the batch that was out first, then, past the dropped segments, the newest.
    const order = ids.map((id) => Number(id.slice(2)));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(ids[0]).toBe('b-0');
    expect(ids.at(-1)).toBe('b-399');
    // Delivered past every kept segment: nothing is kept any more.
    await waitUntil(() => keptFiles().length === 0);
  });

  it('a segment kept after compaction is read by no query and compacted once, across a restart and across a crash between keeping it and its deletion from the log', async () => {
    const retry = gate();
    const first = await start({ sleep: () => retry.opened });
    const drain = await webhook(first.drains);
    answer(() => 503);
    await ingest(first.ep, 'k', 10);
    await waitUntil(() => walFiles().length === 1 && keptFiles().length >= 4);
    expect(await census(first.ep)).toEqual({ total: 200, ids: idRange('k', 0, 200) });
    await stop();
    retry.open();

    // A crash after a segment was kept and before the log deleted it: it is in both folders.
    const kept = keptFiles()[0]!;
    linkSync(tmp.path('edgeLogs', KEPT_DIR, kept), tmp.path('edgeLogs', 'wal', kept));
    const again = gate();
    const second = await start({ sleep: () => again.opened });
    // Its events are in the dataset already: compaction does not add them again, and deletes it from the log once more.
    await waitUntil(() => !existsSync(tmp.path('edgeLogs', 'wal', kept)));
    expect(await census(second.ep)).toEqual({ total: 200, ids: idRange('k', 0, 200) });
    expect(keptFiles()).toContain(kept);
    await stop();

    // The receiver is back: every event arrives from the kept segments, in order.
    answer(() => 200);
    const third = await start();
    await third.drains.idle();
    expect(taken()).toEqual(Array.from({ length: 200 }, (_, k) => `k-${k}`));
    expect(await census(third.ep)).toEqual({ total: 200, ids: idRange('k', 0, 200) });
    // Read past by the only drain: none kept now. A deleted drain's cursor goes with it.
    await waitUntil(() => keptFiles().length === 0);
    await third.drains.store.remove(drain.token);
    await waitUntil(() => !existsSync(join(tmp.dir, 'drain-cursors', `${drain.id}.json`)));
  });

  /** The data dir as the offline `ingest --data-dir` opens it: a DrainLog keeping segments, no forwarder. */
  async function offline(maxBacklogBytes: number, source: string, batches: number) {
    const off = await createEndpoints({
      storage: { dataDir: tmp.dir, maxSegmentBytes: SEGMENT_BYTES },
      now: () => new Date(CENSUS_NOW),
      cache: false,
      segmentKeeper: new DrainLog({ maxBacklogBytes }),
    });
    try {
      for (let b = 0; b < batches; b++) await off.ingest(source, censusEvents('o', 20, b * 20));
      await waitUntil(() => readdirSync(tmp.path(source, 'wal')).filter((n) => n.endsWith('.ndjson')).length === 1);
    } finally {
      await off.close();
    }
  }
  const cursorOf = (id: number) =>
    JSON.parse(readFileSync(join(tmp.dir, 'drain-cursors', `${id}.json`), 'utf8')) as { reads?: string[]; rules?: Record<string, string[]>; dropped?: { events: number; why: string } };

  it('a kept segment dropped past the bound while no drain forwards (the offline ingest) is written in the cursor, and counted and told by the server at its next start', async () => {
    answer(() => 200);
    const first = await start();
    const drain = await webhook(first.drains);
    await waitUntil(() => cursorOf(drain.id).reads?.join() === 'edgeLogs');
    await stop();
    const bound = 2 * SEGMENT_BYTES;
    await offline(bound, 'edgeLogs', 20);
    expect(keptBytes()).toBeLessThanOrEqual(bound);
    const written = cursorOf(drain.id).dropped!;
    expect(written.events).toBeGreaterThan(0);
    expect(written.why).toBe(`its backlog in edgeLogs passed ${bound} bytes, while no drain forwarded`);

    const { ep, drains } = await start();
    await drains.idle();
    const stats = drains.stats()[0]!;
    // Every event is sent or counted as dropped, none both, and the drop is told once.
    expect(stats.dropped).toBe(written.events);
    expect(stats.sent + stats.dropped).toBe(400);
    expect(new Set(taken()).size).toBe(stats.sent);
    expect(warnings.filter((w) => w.startsWith('Log drain hook (webhook): dropped ') && w.includes('while no drain forwarded'))).toHaveLength(1);
    const handler = createHandler(ep, { apiKeys: ['k'], drains });
    const metrics = await (await handler(new Request('http://analytics:4000/metrics', { headers: { 'X-API-KEY': 'k' } }))).text();
    expect(metrics).toContain(`log_endpoints_drain_dropped_events_total{drain="1",name="hook",type="webhook"} ${stats.dropped}\n`);
    // Counted: the cursor no longer holds it, so the start after counts nothing again.
    await waitUntil(() => cursorOf(drain.id).dropped === undefined);
  });

  it("a drop while no drain forwards counts the events the drain's rules match, not every event of the segment (its cursor keeps its rules)", async () => {
    answer(() => 200);
    const first = await start();
    const drain = await first.drains.store.create({ name: 'hook', type: 'webhook', config: { url: `${sink.url}/hook` } });
    // Half the projects (p0-p4 of ten): half of the events.
    const lql = '~"https://p[0-4]\\."';
    await first.drains.store.addRule({ backend_id: drain.id, lql_string: lql, source_id: first.drains.store.source('edgeLogs').logflare.id });
    await waitUntil(() => cursorOf(drain.id).rules?.edgeLogs?.join() === lql);
    await stop();
    const bound = 2 * SEGMENT_BYTES;
    await offline(bound, 'edgeLogs', 20);
    const written = cursorOf(drain.id).dropped!;
    expect(written.events).toBeGreaterThan(0);

    const { drains } = await start();
    await drains.idle();
    const stats = drains.stats()[0]!;
    // Every event the rule matches is sent or counted as dropped, none both, and no other.
    expect(taken().every((id) => Number(id.slice(2)) % 10 < 5)).toBe(true);
    expect(stats.dropped).toBe(written.events);
    expect(stats.sent + stats.dropped).toBe(200);
  });

  it('a segment of a source no drain has a rule for is never kept, after a restart too (the cursor names the sources its rules name)', async () => {
    const first = await start();
    const drain = await webhook(first.drains);
    await waitUntil(() => cursorOf(drain.id).reads?.join() === 'edgeLogs');
    await stop();
    await offline(64 * SEGMENT_BYTES, 'functionEdgeLogs', 10);
    expect(existsSync(tmp.path('functionEdgeLogs', KEPT_DIR)) ? readdirSync(tmp.path('functionEdgeLogs', KEPT_DIR)) : []).toEqual([]);
    // The source it has a rule for is kept as before.
    await offline(64 * SEGMENT_BYTES, 'edgeLogs', 10);
    expect(keptFiles().length).toBeGreaterThan(0);
  });
});
