import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidParameterError, type Endpoints } from '../src/index';
import { edgeEvent, endpointsAt, functionEvent, shiftMicros, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00.000000Z';
const RETENTION: Record<string, string> = {
  FREE: '2026-11-20T12:00:00.000000Z',
  PRO: '2026-11-14T12:00:00.000000Z',
  PAYG: '2026-08-23T12:00:00.000000Z',
  ENTERPRISE: '2026-08-23T12:00:00.000000Z',
};

describe('logs.all', () => {
  const tmp = tempDir();
  let ep: Endpoints;
  let setNow: (iso: string) => void;

  beforeAll(async () => {
    const events: object[] = [];
    // Retention probes: exactly at now - window (excluded) and 1 µs later (included).
    for (const [tier, edge] of Object.entries(RETENTION)) {
      events.push(edgeEvent({ project: `tier-${tier}`, id: 'at-boundary', timestamp: edge }), edgeEvent({ project: `tier-${tier}`, id: 'inside', timestamp: shiftMicros(edge, 1) }));
    }
    // Range probes.
    for (const [id, ts] of [
      ['t1', '2026-11-21T10:00:00.000000Z'],
      ['t2', '2026-11-21T10:00:00.000001Z'],
      ['t3', '2026-11-21T11:00:00.000000Z'],
      ['t4', '2026-11-21T11:00:00.000001Z'],
    ] as const)
      events.push(edgeEvent({ project: 'range', id, timestamp: ts }));
    // Ties on timestamp, ids out of order in the file.
    for (const id of ['c', 'a', 'b']) events.push(edgeEvent({ project: 'ties', id, timestamp: '2026-11-21T11:59:00Z' }));
    events.push(edgeEvent({ project: 'ties', id: 'z', timestamp: '2026-11-21T11:59:30Z' }));
    // 150 entries: only the newest 100 come back.
    for (let i = 0; i < 150; i++) {
      events.push(edgeEvent({ project: 'many', id: `m${String(i).padStart(3, '0')}`, timestamp: new Date(Date.parse(NOW) - (i + 1) * 60_000).toISOString() }));
    }
    events.push(edgeEvent({ project: 'meta', id: 'meta-1', timestamp: '2026-11-21T11:00:00Z', extra: { custom: { nested: [1, 'two'] } } }));
    // Another project whose name is a prefix: matched exactly, never as a pattern.
    events.push(edgeEvent({ project: 'range-2', id: 'x', timestamp: '2026-11-21T10:30:00Z' }));
    writeLines(tmp.path('edge', 'a.ndjson'), events);
    // A function log entry of the same project must not appear: only the edge log contributes.
    writeLines(tmp.path('fn', 'a.ndjson'), [functionEvent({ project: 'range', timestamp: '2026-11-21T10:30:00Z' })]);
    ({ ep, setNow } = await endpointsAt({ edgeLogs: tmp.path('edge', '*.ndjson'), functionEdgeLogs: tmp.path('fn', '*.ndjson') }, NOW));
  });
  afterAll(async () => {
    await ep.close();
    tmp.cleanup();
  });

  for (const tier of Object.keys(RETENTION)) {
    it(`${tier}: entries strictly newer than now - retention window`, async () => {
      setNow(NOW);
      const rows = await ep.logsAll({ project: `tier-${tier}`, project_tier: tier });
      expect(rows.map((r) => r.id)).toEqual(['inside']);
    });
  }

  it('any other tier value behaves like FREE', async () => {
    setNow(NOW);
    for (const tier of ['GOLD', 'free', 'pro']) {
      // The PRO probe entries are 7 days old: outside FREE's one day.
      expect(await ep.logsAll({ project: 'tier-PRO', project_tier: tier })).toEqual([]);
      expect((await ep.logsAll({ project: 'tier-FREE', project_tier: tier })).map((r) => r.id)).toEqual(['inside']);
    }
  });

  it('iso_timestamp_start is exclusive and iso_timestamp_end inclusive', async () => {
    setNow(NOW);
    const ids = async (start?: string, end?: string) => (await ep.logsAll({ project: 'range', project_tier: 'PRO', iso_timestamp_start: start, iso_timestamp_end: end })).map((r) => r.id);
    expect(await ids()).toEqual(['t4', 't3', 't2', 't1']);
    expect(await ids('2026-11-21T10:00:00.000000Z')).toEqual(['t4', 't3', 't2']);
    expect(await ids('2026-11-21T09:59:59.999999Z')).toEqual(['t4', 't3', 't2', 't1']);
    expect(await ids(undefined, '2026-11-21T11:00:00.000000Z')).toEqual(['t3', 't2', 't1']);
    expect(await ids(undefined, '2026-11-21T10:59:59.999999Z')).toEqual(['t2', 't1']);
    expect(await ids('2026-11-21T10:00:00Z', '2026-11-21T11:00:00Z')).toEqual(['t3', 't2']);
    // Offsets are applied: 12:00+02:00 is 10:00Z.
    expect(await ids('2026-11-21T12:00:00+02:00')).toEqual(['t4', 't3', 't2']);
    // Empty means "not given".
    expect(await ids('', '')).toEqual(['t4', 't3', 't2', 't1']);
  });

  it('the retention window still applies when iso_timestamp_start is older', async () => {
    setNow(NOW);
    const rows = await ep.logsAll({ project: 'tier-PRO', project_tier: 'PRO', iso_timestamp_start: '2020-01-01T00:00:00Z' });
    expect(rows.map((r) => r.id)).toEqual(['inside']);
  });

  it('orders by timestamp descending, ties by id ascending', async () => {
    setNow(NOW);
    const rows = await ep.logsAll({ project: 'ties', project_tier: 'FREE' });
    expect(rows.map((r) => r.id)).toEqual(['z', 'a', 'b', 'c']);
  });

  it('returns at most 100 rows: the newest', async () => {
    setNow(NOW);
    const rows = await ep.logsAll({ project: 'many', project_tier: 'FREE' });
    expect(rows).toHaveLength(100);
    expect(rows[0]!.id).toBe('m000');
    expect(rows[99]!.id).toBe('m099');
  });

  it('returns id, timestamp, event_message and metadata as a whole object with extra keys', async () => {
    setNow(NOW);
    const [row] = await ep.logsAll({ project: 'meta', project_tier: 'FREE' });
    expect(Object.keys(row!)).toEqual(['id', 'timestamp', 'event_message', 'metadata']);
    expect(row!.timestamp).toBe('2026-11-21T11:00:00.000000Z');
    expect(row!.event_message).toMatch(/^GET \| 200/);
    expect(row!.metadata).toEqual({
      request: { method: 'GET', path: '/rest/v1/todos', url: 'https://meta.supabase.co/rest/v1/todos', host: 'meta.supabase.co' },
      response: { status_code: 200, origin_time: 12 },
      custom: { nested: [1, 'two'] },
    });
  });

  it('matches the project exactly and reads only the edge log', async () => {
    setNow(NOW);
    const rows = await ep.logsAll({ project: 'range', project_tier: 'FREE' });
    expect(rows.map((r) => r.id)).toEqual(['t4', 't3', 't2', 't1']);
    expect(await ep.logsAll({ project: 'rang', project_tier: 'FREE' })).toEqual([]);
    expect(await ep.logsAll({ project: 'range.*', project_tier: 'FREE' })).toEqual([]);
  });

  it('rejects timestamps that are not ISO 8601, naming the parameter', async () => {
    setNow(NOW);
    for (const [param, value] of [
      ['iso_timestamp_start', 'yesterday'],
      ['iso_timestamp_end', '1795256102'],
      ['iso_timestamp_start', '2026-02-30T00:00:00Z'],
    ]) {
      const error = await ep.query('logs.all', { project: 'range', project_tier: 'FREE', [param!]: value }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParameterError);
      expect(error).toMatchObject({ code: 'invalid_parameter', status: 400, param });
    }
  });

  it('requires project; project_tier absent or empty is FREE (Supabase Studio never sends it)', async () => {
    setNow(NOW);
    await expect(ep.query('logs.all' as string, { project_tier: 'FREE' })).rejects.toMatchObject({ param: 'project' });
    // tier-PRO has an entry inside the PRO window only; tier-FREE one inside the FREE window.
    expect(await ep.logsAll({ project: 'tier-PRO' })).toEqual([]);
    expect(await ep.logsAll({ project: 'tier-PRO', project_tier: '' })).toEqual([]);
    expect((await ep.logsAll({ project: 'tier-FREE' })).map((r) => r.id)).toEqual(['inside']);
    expect((await ep.logsAll({ project: 'tier-FREE', project_tier: '' })).map((r) => r.id)).toEqual(['inside']);
  });

  it('refuses a start after the end (an empty answer would hide the swap), naming the start', async () => {
    setNow(NOW);
    const error = await ep.logsAll({ project: 'range', iso_timestamp_start: '2026-11-21T10:00:00Z', iso_timestamp_end: '2026-11-21T09:59:59.999999Z' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'invalid_parameter', status: 400, param: 'iso_timestamp_start' });
    expect((error as Error).message).toMatch(/after "iso_timestamp_end"/);
    // Equal bounds are a legal (empty: start is exclusive) range.
    await expect(ep.logsAll({ project: 'range', iso_timestamp_start: '2026-11-21T10:00:00Z', iso_timestamp_end: '2026-11-21T10:00:00Z' })).resolves.toEqual([]);
  });
});
