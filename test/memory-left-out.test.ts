import { afterAll, describe, expect, it, vi } from 'vitest';
import { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { MemoryTables } from '../src/managed/memory-tables';
import { TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { pageMemory } from '../src/engine/duckdb/newest-first';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { createEndpoints } from '../src/index';
import { CENSUS_NOW } from './support/census';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { waitUntil } from './support/hang-guard';
import fc from 'fast-check';
import { serializeBatch } from '../src/ingest/serialize-events';

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const lines = (events: object[]) => Buffer.from(events.map((e) => `${JSON.stringify(e)}\n`).join(''));
const at = (id: string, iso: string) => edgeEvent({ id, project: 'a', timestamp: iso });

describe('memory left out of a newest-first page bounded before the oldest event it holds', () => {
  const tmp = tempDir('le-memory-left-out-');
  afterAll(() => tmp.cleanup());

  it('the rule: out only when the inclusive bound is strictly before the oldest held event, and never when that is unknown', () => {
    const all = { rows: 'SELECT 1', typedFields: [], oldest: 100n };
    const newest = { rows: 'SELECT 2', typedFields: [], oldest: 100n };
    expect(pageMemory(all, newest, true, 99n)).toBeUndefined();
    // An event exactly at the bound is on the page.
    expect(pageMemory(all, newest, true, 100n)).toBe(all);
    expect(pageMemory(all, newest, true, null)).toBe(newest);
    expect(pageMemory(all, newest, false, null)).toBe(all);
    // Without a known oldest timestamp memory may hold any: always read.
    const unknown = { rows: 'SELECT 1', typedFields: [] };
    expect(pageMemory(unknown, undefined, true, 0n)).toBe(unknown);
  });

  it('the memory tables know the oldest event of the segments a view reads, as their rows come and go', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const setup = await instance.connect();
    for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
    const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: tmp.path('tables') });
    memory.attach(instance);
    try {
      await memory.insert('edgeLogs', 1, lines([at('x1', '2026-11-21T10:00:00.000001Z'), at('x2', '2026-11-21T11:00:00Z')]));
      await memory.insert('edgeLogs', 2, lines([at('y1', '2026-11-21T11:30:00Z')]));
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBe(micros('2026-11-21T10:00:00Z') + 1n);
      // An older event into a held segment widens its span.
      await memory.insert('edgeLogs', 2, lines([at('y2', '2026-11-21T09:00:00Z')]));
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBe(micros('2026-11-21T09:00:00Z'));
      // Segments the dataset covers are not read, so their spans do not count.
      expect(memory.view('edgeLogs').relation((seq) => seq === 2)?.oldest).toBe(micros('2026-11-21T10:00:00Z') + 1n);
      // A segment whose first insert has not finished has no span yet: no bound at all.
      const inserting = memory.insert('edgeLogs', 3, lines([at('z1', '2026-11-21T11:59:00Z')]));
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBeUndefined();
      await inserting;
      memory.retire('edgeLogs', [2]);
      await memory.settled();
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBe(micros('2026-11-21T10:00:00Z') + 1n);
    } finally {
      await memory.close();
      setup.closeSync();
      instance.closeSync();
    }
  });

  it("an insert's span as ingest read it is the rows' own as DuckDB types them, over awkward timestamps, and costs no statement; a group without one is read from the rows", async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const setup = await instance.connect();
    for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
    const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: tmp.path('awkward') });
    memory.attach(instance);
    const arrival = '2026-11-21T12:00:00.123456Z';
    // Every form the rule reads: ISO with offsets, fractions of 1 - 9 digits, ',' and 'z', a date
    // alone, minutes without seconds, whitespace; numbers and numeric texts in s, ms, µs and ns,
    // negative ones, fractions and exponents, integers past 2^53 (bigint); a Date; none at all.
    const awkward: unknown[] = [
      '2026-11-21T10:15:02.123456789+05:30',
      '2026-11-21T10:15:02,5z',
      '2026-11-21 10:15-0130',
      '2026-11-21',
      '2026-11-21T23:59:59.9999999-23:59',
      '  2026-11-21T10:15:02Z\t',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999Z',
      '1970-01-01T00:00:00.000001+00:01',
      1795256102,
      1795256102.5,
      1795256102.1234567,
      1795256102123,
      1795256102123.9,
      1795256102123456,
      1795256102123456800,
      -1795256102.25,
      1.7952561e9,
      1e-7,
      0,
      '1795256102123456789',
      ' 1795256102.000001 ',
      '-0.5',
      '1.5e3',
      1795256102123456789n,
      new Date('2026-11-21T10:15:02.5Z'),
      undefined,
      null,
    ];
    const read = vi.spyOn(DuckDBConnection.prototype, 'runAndReadAll');
    try {
      const rowsSpan = async (seq: number) => {
        const [row] = (
          await setup.runAndReadAll(
            `SELECT epoch_us(min(timestamp)) AS oldest, epoch_us(max(timestamp)) AS newest, count(*) AS n, count(timestamp) AS stamped FROM le_memory.edge_logs WHERE le_seq = ${seq}`,
          )
        ).getRowObjects();
        return row!;
      };
      const check = async (seq: number, timestamps: readonly unknown[]) => {
        const events = timestamps.map((t, i) => ({ ...at(`s${seq}-${i}`, ''), timestamp: t }));
        const { lines: written, span } = serializeBatch(events, arrival);
        read.mockClear();
        await memory.insert('edgeLogs', seq, written, { span });
        // No statement reads the span back from the rows.
        expect(read.mock.calls.filter(([text]) => String(text).includes('min(timestamp)'))).toEqual([]);
        const row = await rowsSpan(seq);
        // Every row timestamped, and the span exactly the rows' oldest and newest.
        expect(row.stamped).toBe(row.n);
        expect(span).toEqual({ oldest: row.oldest, newest: row.newest });
        expect(memory.view('edgeLogs').relation((s) => s !== seq)?.oldest).toBe(row.oldest);
      };
      let seq = 0;
      // Each alone, then all in one group.
      for (const t of awkward) await check(++seq, [t]);
      await check(++seq, awkward);
      // And random ones of each kind, a group at a time.
      const kinds = fc.oneof(
        fc.date({ min: new Date('0001-01-02T00:00:00Z'), max: new Date('9999-12-30T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
        fc
          .tuple(
            fc.integer({ min: 2, max: 9999 }),
            fc.integer({ min: 1, max: 12 }),
            fc.integer({ min: 1, max: 28 }),
            fc.stringMatching(/^[0-9]{1,9}$/),
            fc.constantFrom('Z', '+01:30', '-0800', '+23:59', ''),
          )
          .map(([y, m, d, f, o]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}T01:02:03.${f}${o}`),
        fc.double({ min: -6e10, max: 9e10, noNaN: true }),
        fc.integer({ min: -(2 ** 52), max: 2 ** 52 }),
        fc.bigInt({ min: -(6n * 10n ** 19n), max: 10n ** 20n }),
        fc.constant(undefined),
      );
      for (const group of fc.sample(fc.array(kinds, { minLength: 1, maxLength: 20 }), { numRuns: 40, seed: 36 })) await check(++seq, group);
      // A group given without a span (a segment loaded at start) has it read from its rows.
      read.mockClear();
      await memory.insert('edgeLogs', ++seq, lines([at('plain', '2026-11-21T08:00:00+02:00')]));
      expect(read.mock.calls.filter(([text]) => String(text).includes('min(timestamp)')).length).toBe(1);
      expect(memory.view('edgeLogs').relation((s) => s !== seq)?.oldest).toBe(micros('2026-11-21T06:00:00Z'));
    } finally {
      read.mockRestore();
      await memory.close();
      setup.closeSync();
      instance.closeSync();
    }
  });

  it('a span that cannot be read is unknown: the segment is never left out by time, even once a later group brings one', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const setup = await instance.connect();
    for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
    const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: tmp.path('unknown') });
    memory.attach(instance);
    const original = DuckDBConnection.prototype.runAndReadAll;
    // The statement reading the span from the rows fails; every other runs as it is.
    const read = vi.spyOn(DuckDBConnection.prototype, 'runAndReadAll').mockImplementation(function (this: DuckDBConnection, ...args: Parameters<typeof original>) {
      if (String(args[0]).includes('min(timestamp)')) return Promise.reject(new Error('span unreadable'));
      return original.apply(this, args);
    });
    try {
      await memory.insert('edgeLogs', 1, lines([at('u1', '2026-11-21T10:00:00Z')]));
      read.mockRestore();
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBeUndefined();
      const { lines: written, span } = serializeBatch([at('u2', '2026-11-21T11:00:00Z')], '2026-11-21T12:00:00Z');
      await memory.insert('edgeLogs', 1, written, { span });
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBeUndefined();
      // Another segment with a span still gives no bound while the unknown one is read.
      await memory.insert('edgeLogs', 2, written, { span });
      expect(memory.view('edgeLogs').relation(() => false)?.oldest).toBeUndefined();
      expect(memory.view('edgeLogs').relation((s) => s === 1)?.oldest).toBe(micros('2026-11-21T11:00:00Z'));
    } finally {
      read.mockRestore();
      await memory.close();
      setup.closeSync();
      instance.closeSync();
    }
  });

  it('pages with the bound at, just before and past the oldest event in memory answer as the same events in a file, and only those before it leave memory out', async () => {
    const dataDir = tmp.path('data');
    const open = () => createEndpoints({ storage: { dataDir }, now: () => new Date(CENSUS_NOW), cache: false });
    const now = Date.parse(CENSUS_NOW);
    // Three days back, one a minute: written by a first process, compacted after a restart.
    const old = Array.from({ length: 120 }, (_, i) => at(`o-${String(i).padStart(3, '0')}`, new Date(now - 3 * 86_400_000 - i * 60_000).toISOString()));
    // The last minute, one a second: held in memory (one group, in the active segment).
    const recent = Array.from({ length: 30 }, (_, i) => at(`n-${String(i).padStart(3, '0')}`, new Date(now - 60_000 - i * 1000).toISOString()));
    const first = await open();
    try {
      await first.ingest('cloudflare.logs.prod', old);
    } finally {
      await first.close();
    }
    writeLines(tmp.path('all.ndjson'), [...old, ...recent]);
    const ep = await open();
    const byHand = await createEndpoints({ sources: { edgeLogs: tmp.path('all.ndjson') }, now: () => new Date(CENSUS_NOW), cache: false });
    const prepare = vi.spyOn(DuckDBConnection.prototype, 'prepare');
    try {
      // The previous process's segment compacted: its events are read from the dataset.
      await waitUntil(() => (ep.stats().storage?.compactedSegments ?? 0) > 0);
      await ep.ingest('cloudflare.logs.prod', recent);
      const ids = async (e: typeof ep, end?: string) => (await e.logsAll({ project: 'a', project_tier: 'PAYG', ...(end ? { iso_timestamp_end: end } : {}) })).map((r) => r.id);
      const oldestHeld = recent.at(-1)!.timestamp as string;
      const justBefore = new Date(Date.parse(oldestHeld) - 1).toISOString().replace('Z', '999Z');
      const readsMemory = async (end: string) => {
        prepare.mockClear();
        const got = await ids(ep, end);
        const texts = prepare.mock.calls.map(([text]) => text);
        return { got, texts, memory: texts.some((t) => t.includes('le_memory')) };
      };
      // Just before the oldest event held: memory left out, the page from the dataset alone.
      const before = await readsMemory(justBefore);
      expect(before.texts.length).toBeGreaterThan(0);
      expect(before.memory).toBe(false);
      expect(before.got).toEqual(await ids(byHand, justBefore));
      expect(before.got[0]).toBe('o-000');
      // Exactly at it: memory read, the event at the bound on the page.
      const exact = await readsMemory(oldestHeld);
      expect(exact.memory).toBe(true);
      expect(exact.got).toEqual(await ids(byHand, oldestHeld));
      expect(exact.got[0]).toBe('n-029');
      for (const end of [recent[10]!.timestamp as string, old[5]!.timestamp as string, undefined]) expect(await ids(ep, end)).toEqual(await ids(byHand, end));
    } finally {
      prepare.mockRestore();
      await ep.close();
      await byHand.close();
    }
  });
});
