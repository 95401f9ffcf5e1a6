import { describe, expect, it } from 'vitest';
import { bodyDigest, bodyKey, bodyKeyOfId, derivedId, MAX_POSITION, retryable } from '../src/ingest/body-digest';
import { bodyLines } from '../src/ingest/body-lines';
import { RecentBodies } from '../src/managed/recent-bodies';

// docs/ingest.md, "Retries and ids": the ids of events sent without one, and the window of recent bodies.

const ARRIVAL = '2026-11-21T12:00:00.000000Z';
const BODY = Buffer.from(
  JSON.stringify([
    { timestamp: '2026-11-21T11:00:00Z', message: 'a' },
    { id: 'own-1', message: 'b' },
    { timestamp: 1795258800, message: 'c' },
  ]),
);
const idsOf = (lines: Buffer) =>
  lines
    .toString()
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l).id as string);

describe('ids derived from the source, the body and the position', () => {
  it('gives every event without an id the same id each time the body is sent, and keeps the ids sent', () => {
    const first = bodyLines(BODY, 'application/json', ARRIVAL, undefined, 'edgeLogs');
    const again = bodyLines(BODY, 'application/json', '2026-11-21T12:03:00.000000Z', undefined, 'edgeLogs');
    expect(first.key).toBe(bodyKey('edgeLogs', bodyDigest(BODY)));
    expect(idsOf(first.lines)).toEqual([derivedId(first.key!, 0), 'own-1', derivedId(first.key!, 2)]);
    expect(idsOf(again.lines)).toEqual(idsOf(first.lines));
  });

  it('is a UUID (version 8) that differs by source, by body and by position, and names its body key', () => {
    const key = bodyKey('edgeLogs', bodyDigest(BODY));
    const id = derivedId(key, 5);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(bodyKeyOfId(id)).toBe(key);
    expect(bodyKeyOfId(derivedId(key, MAX_POSITION))).toBe(key);
    expect(bodyKey('functionEdgeLogs', bodyDigest(BODY))).not.toBe(key);
    expect(bodyKey('edgeLogs', bodyDigest(Buffer.from(`${BODY} `)))).not.toBe(key);
    expect(new Set([0, 1, 2, 255, 256].map((p) => derivedId(key, p))).size).toBe(5);
    // Past the positions an id can number: refused as too large (a code of the error family), never a crash.
    expect(() => derivedId(key, MAX_POSITION + 1)).toThrow(expect.objectContaining({ code: 'payload_too_large', status: 413 }));
    // A random UUID (v4), or any other text, names no body.
    expect(bodyKeyOfId('5b8efff7-9803-4103-9269-b633813fc60c')).toBeNull();
    expect(bodyKeyOfId('own-1')).toBeNull();
  });

  it('keeps random ids for a body with an event that has neither a timestamp nor an id (sent twice, it may be two occurrences)', () => {
    const ping = Buffer.from('[{"message":"ping"},{"timestamp":"2026-11-21T11:00:00Z","message":"a"}]');
    expect(retryable(JSON.parse(ping.toString()))).toBe(false);
    const first = bodyLines(ping, 'application/json', ARRIVAL, undefined, 'edgeLogs');
    const again = bodyLines(ping, 'application/json', ARRIVAL, undefined, 'edgeLogs');
    expect(first.key).toBeNull();
    expect(idsOf(first.lines)[0]).not.toBe(idsOf(again.lines)[0]);
    expect(bodyKeyOfId(idsOf(first.lines)[1]!)).toBeNull();
  });

  it('keeps random ids for a body of more events than the id has positions for', () => {
    const stamped = { timestamp: '2026-11-21T11:00:00Z' };
    expect(retryable(Array(MAX_POSITION + 1).fill(stamped))).toBe(true);
    expect(retryable(Array(MAX_POSITION + 2).fill(stamped))).toBe(false);
  });

  it('derives nothing without a source (ep.ingest has no body)', () => {
    expect(bodyLines(BODY, 'application/json', ARRIVAL).key).toBeNull();
  });
});

describe('the window of recent bodies', () => {
  const clock = () => {
    let ms = Date.parse('2026-11-21T12:00:00Z');
    return { now: () => ms, advance: (by: number) => (ms += by) };
  };
  const storeCounting = (recent: RecentBodies, key: string, stored: string[]) => () => {
    stored.push(key);
    recent.remember(key);
    return Promise.resolve('stored');
  };

  it('acknowledges a body again within the window and stores it again after', async () => {
    const c = clock();
    const recent = new RecentBodies(c.now, { windowMs: 300_000, maxBodies: 10 });
    const stored: string[] = [];
    expect(await recent.once('k', storeCounting(recent, 'k', stored))).toBe('stored');
    c.advance(299_999);
    expect(await recent.once('k', storeCounting(recent, 'k', stored))).toBeNull();
    c.advance(1);
    expect(await recent.once('k', storeCounting(recent, 'k', stored))).toBe('stored');
    expect(stored).toEqual(['k', 'k']);
  });

  it('stores every time a body that has no key', async () => {
    const recent = new RecentBodies(clock().now);
    let stores = 0;
    for (let i = 0; i < 3; i++) await recent.once(null, async () => stores++);
    expect(stores).toBe(3);
  });

  it('holds at most maxBodies, forgetting the oldest first', async () => {
    const recent = new RecentBodies(clock().now, { windowMs: 300_000, maxBodies: 3 });
    for (const key of ['a', 'b', 'c', 'd']) recent.remember(key);
    expect(recent.size).toBe(3);
    expect(['a', 'b', 'c', 'd'].map((k) => recent.has(k))).toEqual([false, true, true, true]);
  });

  it('lets a body that arrives while the same body is being stored wait for it: stored once when that succeeds, stored by the second when it fails', async () => {
    const recent = new RecentBodies(clock().now);
    let finish!: () => void;
    const stored: string[] = [];
    const first = recent.once('k', async () => {
      await new Promise<void>((resolve) => (finish = resolve));
      stored.push('first');
      recent.remember('k');
      return 'first';
    });
    const second = recent.once('k', async () => (stored.push('second'), 'second'));
    finish();
    expect([await first, await second]).toEqual(['first', null]);
    expect(stored).toEqual(['first']);

    let fail!: (error: Error) => void;
    const failing = recent.once('m', () => new Promise((_, reject) => (fail = reject)));
    const retry = recent.once('m', async () => 'retry stored');
    fail(new Error('disk full'));
    await expect(failing).rejects.toThrow('disk full');
    expect(await retry).toBe('retry stored');
  });

  it('is rebuilt from the lines of a segment: the body keys of derived ids (each once), nothing from other ids or marker lines', () => {
    const recent = new RecentBodies(clock().now);
    const a = bodyLines(BODY, 'application/json', ARRIVAL, undefined, 'edgeLogs');
    const other = Buffer.from('[{"timestamp":"2026-11-21T11:00:00Z","message":"z"}]');
    const b = bodyLines(other, 'application/json', ARRIVAL, undefined, 'edgeLogs');
    const segment = Buffer.concat([
      a.lines,
      Buffer.from('{"_wal_commit":{"seq":1,"bytes":10,"crc32":1}}\n{"id":"own-2","timestamp":"2026-11-21T11:00:00Z"}\n'),
      b.lines,
      Buffer.from('{"id":"5b8efff7-9803-4103-9269-b633813fc60c"}\n{"id":"'),
    ]);
    expect(recent.rememberLines(segment)).toBe(2);
    expect([recent.has(a.key!), recent.has(b.key!), recent.size]).toEqual([true, true, 2]);
  });
});
