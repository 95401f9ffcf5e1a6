import { DuckDBInstance, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceRelation, TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { querySql } from '../src/sql/query-files';
import { bindRequest } from '../src/engine/duckdb/bind-request';
import { normalizeParams } from '../src/definitions/params';
import { planQuery } from '../src/definitions/plan-query';
import { rollupsWhenStored, usageApiCounts, type UsageInterval } from '../src/definitions/usage-api-counts';
import { edgeEvent, tempDir, writeLines } from './support/log-files';
import { edgeLogs } from '../src/sources/built-ins';

// The rollup variant of usage.api-counts (queries/duckdb/usage.api-counts.rollups.sql) must give
// exactly the raw statement's answer (usage.api-counts.sql), whatever the pattern, the window
// start (on the hour or not) and however the events are split into files: each file's rollups
// are written on their own, and the relations are their union.

const REFS = ['aaaabbbbccccddddeeee', 'ffffgggghhhhiiiijjjj', 'kkkkllllmmmmnnnnoooo'];
const PATHS = ['/rest/v1/todos', '/storage/v1/object/a.png', '/auth/v1/token', '/realtime/v1/websocket', '/rest/v1/rpc/storage/auth', '/functions/v1/hi', '/'];

/** Deterministic events over 3 days: three projects, custom domains, odd URLs. */
function events(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  const base = Date.parse('2026-11-19T00:00:00Z');
  for (let i = 0; i < 1500; i++) {
    const ref = REFS[i % 3]!;
    const path = PATHS[(i * 7) % PATHS.length]!;
    // Minutes spread over 3 days, a few seconds in: windows cut inside hours.
    const at = new Date(base + ((i * 173) % (3 * 24 * 60)) * 60_000 + (i % 50) * 1000).toISOString();
    const host = i % 11 === 0 ? `api.${ref.slice(0, 6)}-app.com` : `${ref}.supabase.co`;
    // Some URLs name another project's ref in their query (the origin filter must keep them).
    const query = i % 13 === 0 ? `?next=${REFS[(i + 1) % 3]}.` : i % 5 === 0 ? `?n=${i % 40}` : '';
    out.push(edgeEvent({ project: ref, timestamp: at, path, url: `https://${host}${path}${query}` }));
  }
  // A request without a URL and one without a path; a URL shorter than a trigram; non-ASCII text.
  out.push({ ...edgeEvent({ project: REFS[0], timestamp: '2026-11-21T10:10:00Z' }), metadata: { request: { path: '/rest/v1/x' } } });
  out.push({ ...edgeEvent({ project: REFS[0], timestamp: '2026-11-21T10:20:00Z' }), metadata: { request: { url: `https://${REFS[0]}.supabase.co/q` } } });
  out.push(edgeEvent({ project: REFS[1], timestamp: '2026-11-21T10:30:00Z', path: '/rest/v1/x', url: 'ab' }));
  out.push(edgeEvent({ project: REFS[1], timestamp: '2026-11-21T10:40:00Z', path: '/storage/v1/東京', url: `https://${REFS[1]}.supabase.co/storage/v1/東京` }));
  return out;
}

const PATTERNS: Array<string | null> = [
  REFS[0]!,
  REFS[1]!,
  `${REFS[2]}(\\.|$)`,
  `${REFS[1]}\\.supabase`,
  'supabase',
  'app\\.com/rest',
  '(?i)AAAABBBB',
  `${REFS[0]}|${REFS[2]}`,
  '.*',
  'ab',
  '^ab$',
  '東京',
  'no-such-text',
  null,
];
// Every interval with hour or day buckets, at an instant on the hour and at instants inside one
// (the partial first hour then comes from the raw relation).
const INTERVALS: UsageInterval[] = ['hourly', 'daily', '3hr', '1day', '3day', '7day'];
const NOWS = ['2026-11-21T12:00:00.000Z', '2026-11-21T12:37:12.345Z', '2026-11-21T10:00:00.001Z', '2026-11-21T11:59:59.999Z'];

// Every file stored, or the last one an uncompacted tail: its rollups are then computed per query
// as the engine does, the trigram maps by their `rest` (each URL, no map).
describe.each([
  { layout: 'every file stored', tail: false },
  { layout: 'the last file an uncompacted tail', tail: true },
])('usage.api-counts over rollups ($layout)', ({ tail }) => {
  const tmp = tempDir();
  let instance: DuckDBInstance;
  let db: DuckDBConnection;

  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    db = await instance.connect();
    await db.run("SET TimeZone = 'UTC'");
    for (const macro of TIMESTAMP_MACROS) await db.run(macro);
    const all = events();
    // Three files, each with its own rollups, as compaction writes them; the raw relation is all events.
    const parts = [0, 1, 2].map((k) =>
      writeLines(
        tmp.path(`part-${k}.ndjson`),
        all.filter((_, i) => i % 3 === k),
      ),
    );
    const relationOf = (files: string[]) => sourceRelation(edgeLogs, { ndjson: files, parquet: [], parquetTypes: new Map() });
    await db.run(`CREATE TABLE edge_logs AS ${relationOf(parts)}`);
    for (const [rollup, { sql: stored, rest }] of Object.entries(edgeLogs.rollups)) {
      for (const [k, file] of parts.entries()) {
        const sql = `WITH edge_logs AS (${relationOf([file])}) ${tail && k === 2 ? (rest ?? stored) : stored}`;
        await db.run(k === 0 ? `CREATE TABLE ${rollup} AS ${sql}` : `INSERT INTO ${rollup} BY NAME ${sql}`);
        // The relation has the rest's columns whatever is stored (statement-sql.ts, rollupRelation).
        if (k === 0 && rest !== undefined) {
          const columns = (await db.runAndReadAll(`DESCRIBE WITH edge_logs AS (${relationOf([file])}) ${rest}`)).getRowObjectsJS();
          for (const { column_name, column_type } of columns) await db.run(`ALTER TABLE ${rollup} ADD COLUMN IF NOT EXISTS ${column_name} ${column_type}`);
        }
      }
    }
  });
  afterAll(() => {
    db.closeSync();
    instance.closeSync();
    tmp.cleanup();
  });

  /** One statement's rows, with the parameters the endpoint binds (no pattern: single project). */
  async function answer(name: string, project: string | null, interval: UsageInterval, now: string): Promise<unknown[]> {
    const request = planQuery(usageApiCounts, normalizeParams(usageApiCounts, { project: project ?? 'x', interval }), new Date(now));
    const single = { project: null, project_literal: '', project_required: '' };
    const prepared = await db.prepare(querySql('duckdb', name));
    bindRequest(prepared, project === null ? { ...request, params: { ...request.params, ...single } } : request);
    return (await prepared.runAndReadAll()).getRowsJS();
  }

  for (const project of PATTERNS) {
    it(`answers as the raw statement for ${JSON.stringify(project)}`, async () => {
      let rows = 0;
      for (const interval of INTERVALS) {
        for (const now of NOWS) {
          const raw = await answer('usage.api-counts', project, interval, now);
          expect(await answer('usage.api-counts.rollups', project, interval, now), `${interval} at ${now}`).toEqual(raw);
          // The whole-hours variant, for the windows that start on the hour (the one it is chosen for).
          if (rollupsWhenStored(planQuery(usageApiCounts, normalizeParams(usageApiCounts, { project: 'x', interval }), new Date(now)).params) === 'hours')
            expect(await answer('usage.api-counts.hours', project, interval, now), `${interval} at ${now}, whole hours`).toEqual(raw);
          rows += raw.length;
        }
      }
      if (project !== 'no-such-text' && project !== '^ab$') expect(rows).toBeGreaterThan(0);
    });
  }

  it('has URLs that name a ref outside its origin (what the trigram maps must keep)', async () => {
    // The gateway host of REFS[1] never holds REFS[0]; its URLs with `?next=<REFS[0]>.` do.
    const maps = await db.runAndReadAll(`SELECT count(*) FROM edge_logs_url_grams WHERE origin = '${REFS[1]}.supabase.co'`);
    expect(Number(maps.getRowsJS()[0]![0])).toBeGreaterThan(0);
    const viaOtherOrigin = await db.runAndReadAll(`SELECT count(*) FROM edge_logs WHERE contains(request_url, '?next=${REFS[0]}') AND NOT contains(split_part(request_url, '/', 3), '${REFS[0]}')`);
    expect(Number(viaOtherOrigin.getRowsJS()[0]![0])).toBeGreaterThan(0);
  });

  it('takes a NULL map as an origin that may hold anything', async () => {
    // The gateway host of REFS[2] holds URLs that name REFS[0] in their query.
    const origin = `${REFS[2]}.supabase.co`;
    await db.run(`CREATE TABLE kept_maps AS SELECT * FROM edge_logs_url_grams WHERE origin = '${origin}'`);
    try {
      await db.run(`DELETE FROM edge_logs_url_grams WHERE origin = '${origin}'`);
      await db.run(`INSERT INTO edge_logs_url_grams (origin, grams) VALUES ('${origin}', NULL)`);
      const raw = await answer('usage.api-counts', REFS[0]!, 'daily', NOWS[1]!);
      expect(await answer('usage.api-counts.rollups', REFS[0]!, 'daily', NOWS[1]!)).toEqual(raw);
    } finally {
      await db.run(`DELETE FROM edge_logs_url_grams WHERE origin = '${origin}'`);
      await db.run('INSERT INTO edge_logs_url_grams SELECT * FROM kept_maps');
      await db.run('DROP TABLE kept_maps');
    }
  });

  it('lets through only origins whose URLs may hold the literal', async () => {
    // As the engine reads the maps: the stored ones narrowed to the origins the literal keeps
    // (edge_logs_url_grams.matches.sql, bound in their place), the tail's rows as they are.
    const matches = edgeLogs.rollups
      .edge_logs_url_grams!.narrowedBy!.sql.replace('FROM edge_logs_url_grams)', 'FROM edge_logs_url_grams WHERE grams IS NOT NULL)')
      .replaceAll('$text', '$project_required');
    const narrowed = `WITH edge_logs_url_grams AS (SELECT origin, NULL::VARCHAR AS request_url FROM (${matches}) UNION ALL SELECT origin, request_url FROM edge_logs_url_grams WHERE grams IS NULL), `;
    const statement = querySql('duckdb', 'usage.api-counts.rollups')
      .split('counted AS')[0]!
      .replace(/,\s*$/, '')
      .replace(/^(\s*--[^\n]*\n)*\s*WITH\s/, narrowed);
    const prepared = await db.prepare(`${statement} SELECT DISTINCT origin FROM candidate_origins ORDER BY 1`);
    prepared.bind({ project_required: 'kkkkllllmmmm' }, { project_required: VARCHAR });
    const origins = (await prepared.runAndReadAll()).getRowsJS().map((r) => r[0]);
    // Its own host, its custom domain never (`api.kkkkll-app.com` lacks `lllm`), and the hosts whose URLs name it.
    expect(origins).toContain('kkkkllllmmmmnnnnoooo.supabase.co');
    expect(origins).not.toContain('api.kkkkll-app.com');
    expect(origins).toContain('ffffgggghhhhiiiijjjj.supabase.co');
  });

  // The rule of the tail's rows, on a relation of its own: once, not per layout.
  if (tail)
    it("lets through an uncompacted tail's origin only when one of its URLs holds the literal", async () => {
      // The tail's rows of the maps (every request uncompacted here): its URLs, no map. A tail
      // holds every project while a writer ingests; each origin of it a candidate read the stored
      // rollups of every origin.
      const rest = `WITH edge_logs_url_grams AS (${edgeLogs.rollups.edge_logs_url_grams!.rest}), `;
      const candidates = `${querySql('duckdb', 'usage.api-counts.rollups')
        .split('counted AS')[0]!
        .replace(/,\s*$/, '')
        .replace(/^(\s*--[^\n]*\n)*\s*WITH\s/, rest)} SELECT DISTINCT origin FROM candidate_origins ORDER BY 1`;
      for (const literal of [REFS[0]!, `${REFS[1]}.supabase`, 'app.com/rest', '東京', 'no-such-text']) {
        const prepared = await db.prepare(candidates);
        prepared.bind({ project_required: literal }, { project_required: VARCHAR });
        const holding = await db.prepare("SELECT DISTINCT split_part(request_url, '/', 3) FROM edge_logs WHERE contains(request_url, $literal) ORDER BY 1");
        holding.bind({ literal }, { literal: VARCHAR });
        const expected = (await holding.runAndReadAll()).getRowsJS().map((r) => r[0]);
        expect(
          (await prepared.runAndReadAll()).getRowsJS().map((r) => r[0]),
          literal,
        ).toEqual(expected);
        if (literal !== 'no-such-text') expect(expected.length, literal).toBeGreaterThan(0);
      }
    });
});

describe('rollupsWhenStored: which statement answers a call once rollups are stored', () => {
  const at = (iso: string) => ({ timestamp: BigInt(Date.parse(iso)) * 1000n });
  it.each([
    ['hour', '2026-11-21T11:00:00.000Z', 'hours'],
    ['hour', '2026-11-21T11:23:00.000Z', null],
    ['hour', '2026-11-21T09:00:00.001Z', null],
    ['day', '2026-11-14T11:23:00.000Z', 'rollups'],
    ['day', '2026-11-14T12:00:00.000Z', 'hours'],
    ['minute', '2026-11-21T11:00:00.000Z', null],
  ] as const)('%s buckets from %s: %s', (unit, start, expected) => {
    expect(rollupsWhenStored({ unit, start: at(start) })).toBe(expected);
  });

  it('is declared as a variant of the endpoint', () => {
    expect(Object.keys(usageApiCounts.variants ?? {})).toEqual(['hours', 'rollups']);
    expect(usageApiCounts.variants?.hours?.duckdb).toBe(querySql('duckdb', 'usage.api-counts.hours'));
    expect(usageApiCounts.variants?.rollups?.duckdb).toBe(querySql('duckdb', 'usage.api-counts.rollups'));
  });
});
