import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createHandler } from '../src/http';
import { createEndpoints, type Endpoints } from '../src/index';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { formatIsoMicros } from '../src/time/iso';
import { waitUntil } from './support/hang-guard';
import { tempDir } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const NOW_MICROS = BigInt(Date.parse(NOW)) * 1000n;
const DAY = 86_400_000_000n;
const tmp = tempDir('le-readable-');
afterAll(() => tmp.cleanup());

/** Strings as loggers write them, a lone half of a surrogate pair included (a string cut through an emoji). */
const text = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '😀'.slice(0, 1), '😀'.slice(1), '"', '\\', '\n', '\u0000', '😀') },
  ),
  maxLength: 12,
});

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** One instant within logs.all's window, written in one of the forms of the rule (docs/durability.md). */
const timestampForm = fc
  .record({
    micros: fc.bigInt({ min: NOW_MICROS - 80n * DAY, max: NOW_MICROS + DAY }),
    form: fc.constantFrom('iso', 'seconds', 'seconds-text', 'millis', 'micros', 'nanos-text', 'nanos-number'),
    separator: fc.constantFrom('T', ' '),
    comma: fc.boolean(),
    fraction: fc.integer({ min: 0, max: 9 }),
    seconds: fc.boolean(),
    offsetMinutes: fc.constantFrom(null, 0, 60, -90, 330, -720, 23 * 60 + 59),
    offsetStyle: fc.constantFrom('colon', 'plain', 'hours'),
    lowerZ: fc.boolean(),
    space: fc.constantFrom('', ' ', '\t', '\u00a0', '\ufeff'),
  })
  .map((f): string | number => {
    if (f.form === 'seconds') return Number(f.micros / 1_000_000n) + Number(f.micros % 1_000_000n) / 1e6;
    if (f.form === 'seconds-text') return `${f.space}${f.micros / 1_000_000n}.${pad(Number(f.micros % 1_000_000n), 6)}${f.space}`;
    if (f.form === 'millis') return Number(f.micros / 1000n);
    if (f.form === 'micros') return Number(f.micros);
    if (f.form === 'nanos-text') return `${f.micros * 1000n + 999n}`;
    if (f.form === 'nanos-number') return Number(f.micros * 1000n);
    // ISO: the wall time at the offset, written with the separator, fraction and offset chosen.
    const offset = f.offsetMinutes ?? 0;
    const local = new Date(Number(f.micros / 1000n) + offset * 60_000);
    const day = `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`;
    const fraction = f.fraction ? `${f.comma ? ',' : '.'}${pad(Number(f.micros % 1_000_000n), 6)}999`.slice(0, f.fraction + 1) : '';
    const clock = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}${f.seconds ? `:${pad(local.getUTCSeconds())}${fraction}` : ''}`;
    let zone = '';
    if (f.offsetMinutes === 0) zone = f.lowerZ ? 'z' : 'Z';
    else if (f.offsetMinutes !== null) {
      const sign = offset < 0 ? '-' : '+';
      const hh = pad(Math.floor(Math.abs(offset) / 60));
      const mm = pad(Math.abs(offset) % 60);
      zone = f.offsetStyle === 'colon' || (f.offsetStyle === 'hours' && mm !== '00') ? `${sign}${hh}:${mm}` : f.offsetStyle === 'plain' ? `${sign}${hh}${mm}` : `${sign}${hh}`;
    }
    return `${f.space}${day}${f.separator}${clock}${zone}${f.space}`;
  });

/** Timestamps no rule reads: ingest refuses them (400, naming the event). */
const unreadable = fc.constantFrom('2026-1-2T10:00:00Z', '2026-11-21T10:00:00+24:00', 'yesterday', '0000-06-01T00:00:00Z', '2026-11-21  10:00', '0x10', '1_000', '', true, { at: 1 });

interface Sent {
  id: string;
  timestamp?: unknown;
  message: string;
  project: string;
  metadata: Record<string, unknown>;
}

const metadata = fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null), fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxKeys: 3 })), {
  maxKeys: 4,
});

/** A batch: a project of its own (a lone surrogate in it too), events with every form, maybe one unreadable timestamp. */
const batch = fc.record({
  events: fc.array(fc.record({ id: text, timestamp: fc.option(timestampForm, { nil: undefined }), message: text, metadata }), { minLength: 1, maxLength: 12 }),
  projectSuffix: text,
  bad: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.record({ at: fc.nat(), value: unreadable }) }),
  path: fc.constantFrom('library', 'json', 'ndjson', 'gzip', 'batch'),
});

/** `String.prototype.toWellFormed`: what ingest makes of every string. */
const wellFormed = (value: unknown): unknown => {
  if (typeof value === 'string') return (value as unknown as { toWellFormed(): string }).toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), wellFormed(v)]));
};

async function send(ep: Endpoints, path: string, events: Sent[]): Promise<{ status: number; index?: number }> {
  if (path === 'library') {
    try {
      await ep.ingest('cloudflare.logs.prod', events);
      return { status: 200 };
    } catch (error) {
      return { status: (error as { status: number }).status, index: (error as { index?: number }).index };
    }
  }
  const handler = createHandler(ep, { auth: false });
  const json = JSON.stringify(path === 'batch' ? { batch: events } : events);
  const body = path === 'ndjson' ? events.map((e) => JSON.stringify(e)).join('\n') : path === 'gzip' ? gzipSync(json) : json;
  const headers: Record<string, string> = { 'Content-Type': path === 'ndjson' ? 'application/x-ndjson' : 'application/json' };
  if (path === 'gzip') headers['Content-Encoding'] = 'gzip';
  const response = await handler(new Request('http://localhost/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', headers, body }));
  const answer = (await response.json()) as { error?: { index?: number } };
  return { status: response.status, index: answer.error?.index };
}

/** Every event of a project that logs.all serves (at most 100: batches are smaller). */
async function served(ep: Endpoints, project: string) {
  const { result } = await ep.query('logs.all', { project, project_tier: 'PAYG' });
  return result as Array<{ id: string; timestamp: string; event_message: string; metadata: unknown }>;
}

describe('what ingest acknowledges is served (docs/durability.md, "What ingest accepts")', () => {
  it('every event answered 200, through the library or HTTP, in any timestamp form and with any string, is served as sent; a batch with an unreadable timestamp is refused whole, naming the event', async () => {
    const dataDir = tmp.path('property');
    let ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), cache: false });
    const expected = new Map<string, Array<{ id: string; timestamp: string; event_message: string; metadata: unknown }>>();
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(batch, async ({ events: drawn, projectSuffix, bad, path }) => {
          const project = `p${++run}-${projectSuffix}`;
          const events: Sent[] = drawn.map((e, i) => ({
            id: `${run}-${i}-${e.id}`,
            ...(e.timestamp === undefined ? {} : { timestamp: e.timestamp }),
            message: e.message,
            project,
            metadata: e.metadata,
          }));
          const badAt = bad === null ? null : bad.at % events.length;
          if (bad !== null) events[badAt!]!.timestamp = bad.value;
          const answer = await send(ep, path, events);
          const key = wellFormed(project) as string;
          if (badAt !== null) {
            expect(answer).toEqual({ status: 400, index: badAt });
            expect(await served(ep, key)).toEqual([]);
            return;
          }
          expect(answer.status).toBe(200);
          const rows = events.map((e) => ({
            id: wellFormed(e.id) as string,
            timestamp: e.timestamp === undefined ? formatIsoMicros(NOW_MICROS) : formatIsoMicros(eventTimestampMicros(e.timestamp)!),
            event_message: wellFormed(e.message) as string,
            metadata: wellFormed(e.metadata),
          }));
          expected.set(key, rows);
          expect(sortRows(await served(ep, key))).toEqual(sortRows(rows));
        }),
        { numRuns: 60, seed: 1818 },
      );
      // Read again from the write-ahead files (a restart), then from Parquet (compacted at start).
      await ep.close();
      ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), cache: false });
      for (const [project, rows] of expected) expect(sortRows(await served(ep, project))).toEqual(sortRows(rows));
      await waitUntil(() => ep.stats().storage!.compactedSegments > 0);
      await ep.close();
      ep = await createEndpoints({ storage: { dataDir }, now: () => new Date(NOW), cache: false });
      for (const [project, rows] of expected) expect(sortRows(await served(ep, project))).toEqual(sortRows(rows));
      expect(expected.size).toBeGreaterThan(20);
    } finally {
      await ep.close();
    }
  });
});

function sortRows<T extends { id: string }>(rows: T[]): T[] {
  return [...rows].map((r) => ({ ...r, metadata: (r as { metadata?: unknown }).metadata })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
