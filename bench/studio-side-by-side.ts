/**
 * Two builds of the library side by side over the same Studio week, with chdb beside them in the
 * same process (docs/performance.md, "No fixed cost per request"): each build opens its own copy of
 * the managed data dir the Studio bench made (bench/studio.ts, run first at the same scale), every
 * answer is compared first, then rounds interleave the engines call by call, rotating which goes
 * first, idle and then while a writer ingests batches of 100 into each build's instance. Each build
 * is asked in process (`ep.query`, as bench/studio-ours.ts asks) and over HTTP (the node listener
 * `serve --supabase` runs, Studio's URL and headers). Reported per kind: p50 wall ms and the median
 * of the process's CPU per call (which the machine's load moves less than the clock).
 *
 *   npx tsup && (cd <main's tree> && npx tsup)
 *   npx tsx bench/studio-side-by-side.ts --before <main's tree>/dist --after dist [--scale default]
 *                                        [--rounds 31] [--kinds short|week|all] [--skip-chdb] [--skip-http]
 *                                        [--skip-writer] [--before-data <managed data dir>] [--after-data <managed data dir>]
 *                                        [--json out.json]
 *
 * `--kinds week`: the 7-day kinds alone. `--before-data`, `--after-data`: a build's copy made from
 * this managed data dir instead of the Studio bench's (the same week with the rollups that build
 * defines, computed by its `check --repair`, so neither build's compactor recomputes them while timed).
 */
import { cp, rm, writeFile } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Endpoints } from '../src/index';
import { memoryBudget } from '../src/duckdb/memory-budget';
import { studioWriter } from './studio-ours';
import { studioHeaders, studioUrl } from '../test/support/supabase/studio-requests';
import { REFERENCE } from './dataset';
import { waitCompacted } from './managed';
import { answerDifference } from './studio-compare';
import { studioCasesOf, type StudioCase } from './studio-cases';
import { openStudioChdb } from './studio-chdb';
import { chdbColumnsOf } from './studio-chdb-fields';
import { prepareStudioData, STUDIO_SCALES, type StudioScale } from './studio-data';
import { percentile, round, loadAverages } from './stats';
import { peakRssMb } from './serve-process';

const KEY = 'side-by-side-key';

/** One build of the library, opened over its own copy of the week. */
interface Build {
  label: string;
  ep: Endpoints;
  server: Server;
  url: string;
}

interface Sample {
  wall: number[];
  cpu: number[];
}

/** The short kinds issue 39 names: everything but the 7-day ranges. */
const isShort = (c: StudioCase) => !/7 days/.test(c.kind);

async function openBuild(label: string, dist: string, dataDir: string): Promise<Build> {
  const lib = (await import(pathToFileURL(join(dist, 'index.js')).href)) as typeof import('../src/index');
  const node = (await import(pathToFileURL(join(dist, 'node.js')).href)) as typeof import('../src/node');
  // As bench/studio-ours.ts opens ours (what `serve --supabase` runs), room left for the other build and chdb.
  const ep = await lib.createEndpoints({
    ...lib.supabasePreset,
    storage: { dataDir },
    now: () => REFERENCE,
    cache: false,
    memoryLimit: `${Math.ceil((process.memoryUsage().rss + 8 * 2 ** 30) / 1e6)}MB`,
    duckdb: { threads: 2, memoryLimit: memoryBudget().queries.memoryLimit },
  });
  const listener = node.createNodeListener(ep, { apiKeys: [KEY] });
  const server = createServer(listener);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { label, ep, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function inProcess(b: Build, c: StudioCase): Promise<Array<Record<string, unknown>>> {
  const params = { project: 'default', iso_timestamp_start: c.request.iso_timestamp_start, iso_timestamp_end: c.request.iso_timestamp_end };
  const { result } = await b.ep.query('logs.all', params, { sql: c.request.sql });
  return result as Array<Record<string, unknown>>;
}

async function overHttp(b: Build, c: StudioCase): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(studioUrl(b.url, c.request), { headers: studioHeaders(KEY) });
  const body = (await response.json()) as { result?: Array<Record<string, unknown>>; error?: unknown };
  if (response.status !== 200) throw new Error(`${b.label} over HTTP: ${response.status} ${JSON.stringify(body.error)}`);
  return body.result!;
}

async function timed(work: () => Promise<unknown>, into: Sample): Promise<void> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await work();
  into.wall.push(Number(process.hrtime.bigint() - start) / 1e6);
  const used = process.cpuUsage(cpu);
  into.cpu.push((used.user + used.system) / 1000);
}

const p50 = (xs: readonly number[]) => round(percentile(xs, 0.5));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      before: { type: 'string' },
      after: { type: 'string', default: 'dist' },
      scale: { type: 'string', default: 'default' },
      rounds: { type: 'string', default: '31' },
      kinds: { type: 'string', default: 'short' },
      'skip-chdb': { type: 'boolean', default: false },
      'skip-http': { type: 'boolean', default: false },
      'skip-writer': { type: 'boolean', default: false },
      'before-data': { type: 'string' },
      'after-data': { type: 'string' },
      json: { type: 'string' },
    },
  });
  if (!values.before) throw new Error('--before <dist of the build to compare with> is required');
  const scale = values.scale as StudioScale;
  if (!(scale in STUDIO_SCALES)) throw new Error(`--scale must be one of ${Object.keys(STUDIO_SCALES).join(', ')}`);
  const log = (line: string) => console.error(line);
  const data = await prepareStudioData(scale, log);
  if (!existsSync(join(data.dir, 'managed-ingested.json'))) throw new Error(`run bench/studio.ts --scale ${scale} first: it ingests the week this bench copies`);
  const cases = studioCasesOf(data).filter((c) => values.kinds === 'all' || (values.kinds === 'week' ? !isShort(c) : isShort(c)));
  const builds: Build[] = [];
  const dists = { before: resolve(values.before), after: resolve(values.after) };
  for (const [label, dist] of Object.entries(dists)) {
    const dir = join(data.dir, `side-${label}`);
    await rm(dir, { recursive: true, force: true });
    const from = values[`${label}-data` as 'before-data' | 'after-data'];
    await cp(from ? resolve(from) : join(data.dir, 'managed'), dir, { recursive: true });
    builds.push(await openBuild(label, dist, dir));
    log(`side-by-side: ${label} (${dist}) open over ${dir}`);
  }
  // Timed once each instance's compactor is done with what its open found (recovery, the days'
  // merges), as bench/studio-ours.ts waits: a dataset being committed to is read again by every query.
  await Promise.all(builds.map((b) => waitCompacted(b.ep, 3600, join(data.dir, `side-${b.label}`))));
  for (const b of builds) {
    const ages = ['edgeLogs', 'postgresLogs'].map((source) => `${source} ${Math.round((Date.now() - statSync(join(data.dir, `side-${b.label}`, source, 'parquet', '_compact')).mtimeMs) / 1000)} s`);
    log(`side-by-side: ${b.label} compacted; its logs last changed: ${ages.join(', ')} ago`);
  }
  const chdb = values['skip-chdb'] ? null : await openStudioChdb(data, log);
  const startLoad = loadAverages();
  const started = new Date().toISOString();
  try {
    if (chdb) for (const c of chdbColumnsOf(cases.map((k) => k.clickhouse))) await chdb.materialize(c.table, c.column, c.type, c.expression);
    // Every answer compared first: the two builds alike (in process and over HTTP), and chdb's.
    const differences = new Map<StudioCase, string>();
    for (const c of cases) {
      // Compared as the Studio bench compares engines (rows tied on a count or a timestamp may come in any order).
      const [a, b] = [await inProcess(builds[0]!, c), await inProcess(builds[1]!, c)];
      const notes: string[] = [];
      const differs = (x: Array<Record<string, unknown>>, label: string) => {
        const d = answerDifference(c, x, a);
        if (d) notes.push(`${label}: ${d}`);
      };
      differs(b, 'after');
      if (!values['skip-http']) for (const build of builds) differs(await overHttp(build, c), `${build.label} over HTTP`);
      if (chdb) {
        const d = answerDifference(c, b, await chdb.run(c.clickhouse.sql, c.clickhouse.params));
        if (d) notes.push(`chdb: ${d}`);
      }
      differences.set(c, notes.length ? notes.join('; ') : 'same');
    }
    type Engine = { name: string; run: (c: StudioCase) => Promise<unknown> };
    const engines: Engine[] = builds.flatMap((b) => [
      { name: `${b.label}`, run: (c: StudioCase) => inProcess(b, c) },
      ...(values['skip-http'] ? [] : [{ name: `${b.label} http`, run: (c: StudioCase) => overHttp(b, c) }]),
    ]);
    if (chdb) engines.push({ name: 'chdb', run: (c) => chdb.run(c.clickhouse.sql, c.clickhouse.params) });
    const phases: Array<{ phase: string; loadStart: number[]; loadEnd: number[]; ingested: number; samples: Map<StudioCase, Map<string, Sample>> }> = [];
    for (const phase of values['skip-writer'] ? ['idle'] : ['idle', 'while ingesting']) {
      const writers = phase === 'idle' ? [] : builds.map((b) => studioWriter(b.ep));
      const loadStart = loadAverages();
      const samples = new Map(cases.map((c) => [c, new Map(engines.map((e) => [e.name, { wall: [], cpu: [] } as Sample]))]));
      for (const c of cases) for (const e of engines) await e.run(c); // warm
      for (let r = 0; r < Number(values.rounds); r++) {
        for (const c of cases) {
          for (let i = 0; i < engines.length; i++) {
            const e = engines[(i + r) % engines.length]!;
            await timed(() => e.run(c), samples.get(c)!.get(e.name)!);
          }
        }
      }
      let ingested = 0;
      for (const w of writers) ingested += await w.stop();
      phases.push({ phase, loadStart, loadEnd: loadAverages(), ingested, samples });
    }
    const lines: string[] = [`${started}, load average ${startLoad.join(' ')} at the start, ${loadAverages().join(' ')} at the end; ${values.rounds} rounds`];
    for (const p of phases) {
      lines.push(
        '',
        `**${p.phase}** (load ${p.loadStart.join(' ')} to ${p.loadEnd.join(' ')}${p.ingested ? `; the writers got ${p.ingested} events acknowledged` : ''}): p50 wall ms / median CPU ms per call`,
        '',
      );
      const names = engines.map((e) => e.name);
      const ratio = (x: string, y: string, c: StudioCase) => {
        const s = p.samples.get(c)!;
        return s.has(x) && s.has(y) ? String(round(p50(s.get(x)!.cpu) / p50(s.get(y)!.cpu))) : '';
      };
      lines.push(`| request kind | ${names.join(' | ')} | CPU before / after | CPU chdb / after | answers |`, `|---|${names.map(() => '---').join('|')}|---:|---:|---|`);
      for (const c of cases) {
        const s = p.samples.get(c)!;
        lines.push(
          `| ${c.kind} | ${names.map((n) => `${p50(s.get(n)!.wall)} / ${p50(s.get(n)!.cpu)}`).join(' | ')} | ${ratio('before', 'after', c)} | ${ratio('chdb', 'after', c)} | ${differences.get(c)} |`,
        );
      }
    }
    console.log(lines.join('\n'));
    console.log(`peak RSS (VmHWM) of the bench process, our builds and chdb in it: ${peakRssMb(process.pid)} MiB`);
    if (values.json) {
      const json = phases.map((p) => ({
        phase: p.phase,
        load: { start: p.loadStart, end: p.loadEnd },
        ingested: p.ingested,
        cases: cases.map((c) => ({ kind: c.kind, answers: differences.get(c), engines: Object.fromEntries([...p.samples.get(c)!].map(([n, s]) => [n, { p50_ms: p50(s.wall), cpu_ms: p50(s.cpu) }])) })),
      }));
      await writeFile(values.json, JSON.stringify({ started, dists, phases: json }, null, 2));
    }
  } finally {
    chdb?.close();
    for (const b of builds) {
      b.server.closeAllConnections();
      await new Promise((done) => b.server.close(done));
      await b.ep.close();
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) await main();
