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
