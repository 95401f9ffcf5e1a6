/**
 * Ingest's own CPU per event, stage by stage, in one process without HTTP: the ingest bench's
 * bodies of gateway events (bench/ingest.ts) through the work the server does for each, one stage
 * at a time over every body so each stage's process CPU (every thread: DuckDB's and libuv's too)
 * is its own. The stages: the nesting scan a body gets as it arrives (`NestingScan`, main thread),
 * the parse thread's work (`bodyLines`: decode, parse, checks, ids, the lines), the write-ahead
 * log's group commit (`Wal.append`, fdatasync-ed, `concurrency` bodies a group as the server's
 * connections make them), and the memory tables' insert (`MemoryTables.insert`, the same groups).
 * Beside each stage's CPU, the bytes it wrote to disk an event (`write_bytes` of /proc/self/io).
 *
 *   npx tsx bench/ingest-stages.ts [--batch 1000] [--bodies 100] [--concurrency 16] [--rounds 3] [--before <checkout>] [--after .]
 *
 * With `--before`, two checkouts' stages (each build's src/, loaded by path) in one process, on the
 * same bodies: each round runs every stage of one build, then of the other, the order alternating
 * round by round, each line named by its build.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { Prng } from '../src/fixtures/prng';
import { gatewayBenchEvent } from '../test/support/gateway-bench-event';
import { bodyLines } from '../src/ingest/body-lines';
import { NestingScan } from '../src/ingest/json-nesting';
import { Wal } from '../src/managed/wal/wal';
import { MemoryTables } from '../src/managed/memory-tables';
import { BUILT_IN_SOURCE_SET } from '../src/sources/built-ins';
import { TIMESTAMP_MACROS } from '../src/duckdb/source-relations';
import { round } from './stats';
import { peakRssMb } from './serve-process';
import { sourceAt } from './checkout-library';

/** The process's CPU (user + system, every thread) in µs. */
function cpu(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Bytes the process caused to be written to disk so far (`write_bytes` of /proc/self/io; 0 where there is none). */
function written(): number {
  try {
    return Number(/^write_bytes: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** One stage's cost an event: process CPU, and bytes written to disk. */
export interface StageCost {
  us: number;
  bytes: number;
}

/** The code of one build the stages run (typed as this checkout's). */
export interface StagesBuild {
  MemoryTables: typeof MemoryTables;
  bodyLines: typeof bodyLines;
  Wal: typeof Wal;
  NestingScan: typeof NestingScan;
  BUILT_IN_SOURCE_SET: typeof BUILT_IN_SOURCE_SET;
  TIMESTAMP_MACROS: typeof TIMESTAMP_MACROS;
}

/** This checkout's build: the modules imported above. */
const THIS_BUILD: StagesBuild = { MemoryTables, bodyLines, Wal, NestingScan, BUILT_IN_SOURCE_SET, TIMESTAMP_MACROS };

/** A checkout's build, from its own src/ (loaded beside this one's). */
export async function stagesBuildAt(checkout: string): Promise<StagesBuild> {
  return {
    MemoryTables: (await sourceAt<typeof import('../src/managed/memory-tables')>(checkout, 'managed/memory-tables.ts')).MemoryTables,
    bodyLines: (await sourceAt<typeof import('../src/ingest/body-lines')>(checkout, 'ingest/body-lines.ts')).bodyLines,
    Wal: (await sourceAt<typeof import('../src/managed/wal/wal')>(checkout, 'managed/wal/wal.ts')).Wal,
    NestingScan: (await sourceAt<typeof import('../src/ingest/json-nesting')>(checkout, 'ingest/json-nesting.ts')).NestingScan,
    BUILT_IN_SOURCE_SET: (await sourceAt<typeof import('../src/sources/built-ins')>(checkout, 'sources/built-ins.ts')).BUILT_IN_SOURCE_SET,
    TIMESTAMP_MACROS: (await sourceAt<typeof import('../src/duckdb/source-relations')>(checkout, 'duckdb/source-relations.ts')).TIMESTAMP_MACROS,
  };
}

/**
 * The built-in sources' memory tables as managed storage holds them: attached to an in-memory
 * DuckDB with the timestamp macros, their database in `folder`. `setup` is the connection that
 * made the macros; close it and `instance` when done. `build`: whose code (default this checkout's).
 */
export async function benchMemoryTables(folder: string, build: StagesBuild = THIS_BUILD): Promise<{ instance: DuckDBInstance; setup: DuckDBConnection; memory: MemoryTables }> {
  const instance = await DuckDBInstance.create(':memory:');
  const setup = await instance.connect();
  for (const macro of build.TIMESTAMP_MACROS) await setup.run(macro);
  const memory = new build.MemoryTables(build.BUILT_IN_SOURCE_SET, { folder });
  memory.attach(instance);
  return { instance, setup, memory };
}

/** Bodies as bench/ingest.ts sends them: each numbered by its first event, so none repeats another. */
export function bodies(batch: number, count: number): Buffer[] {
  const prng = new Prng(batch);
  const events = Array.from({ length: batch }, (_, i) => gatewayBenchEvent(prng, i));
  const [head, tail] = JSON.stringify({ batch: [{ bench_request: 0, ...events[0] }, ...events.slice(1)] }).split('"bench_request":0') as [string, string];
  return Array.from({ length: count }, (_, n) => Buffer.from(`${head}"bench_request":${n}${tail}`));
}

/** Each stage's cost an event (CPU, disk writes) over `count` bodies of `batch` events; `build`: whose code (default this checkout's). */
export async function measureStages(batch: number, count: number, concurrency: number, build: StagesBuild = THIS_BUILD): Promise<Record<string, StageCost>> {
  const { bodyLines, NestingScan, Wal } = build;
  const sent = bodies(batch, count);
  const events = batch * count;
  const dir = mkdtempSync(join(tmpdir(), 'le-bench-stages-'));
  const { instance, setup, memory } = await benchMemoryTables(join(dir, 'tables'), build);
  const wal = await Wal.open({ dir: join(dir, 'wal') });
  const out: Record<string, StageCost> = {};
  let at = 0;
  let bytesAt = 0;
  const start = () => {
    at = cpu();
    bytesAt = written();
  };
  const cost = (): StageCost => ({ us: (cpu() - at) / events, bytes: (written() - bytesAt) / events });
  try {
    start();
    for (const body of sent) new NestingScan().feed(body);
    out.nesting = cost();

    start();
    const arrival = new Date().toISOString();
    const parsed = sent.map((body) => bodyLines(body, 'application/json', arrival, undefined, 'edgeLogs', true));
    const lines = parsed.map((p) => p.lines);
    out.parse = cost();

    start();
    const seqs: number[] = [];
    for (let i = 0; i < lines.length; i += concurrency) {
      const group = lines.slice(i, i + concurrency);
      seqs.push(...(await Promise.all(group.map((l) => wal.append(l)))).map((r) => r.seq));
    }
    out.wal = cost();

    start();
    for (let i = 0; i < lines.length; i += concurrency) {
      // With what the body's parse knew (its span, whether a metadata holds a '['), as the server's ingest gives it.
      await Promise.all(parsed.slice(i, i + concurrency).map((p, j) => memory.insert('edgeLogs', seqs[i + j]!, p.lines, p)));
    }
    await memory.settled();
    out.memory = cost();
  } finally {
    await wal.close();
    await memory.close();
    setup.closeSync();
    instance.closeSync();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      batch: { type: 'string', default: '1000' },
      bodies: { type: 'string', default: '100' },
      concurrency: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '3' },
      before: { type: 'string' },
      after: { type: 'string', default: '.' },
    },
  });
  const batch = Number(values.batch);
  // Without --before, this checkout's own build, its lines unnamed (as before the option was added).
  const builds: Array<[string, StagesBuild]> = values.before
    ? [
        ['before', await stagesBuildAt(values.before)],
        ['after', await stagesBuildAt(values.after!)],
      ]
    : [['after', values.after === '.' ? THIS_BUILD : await stagesBuildAt(values.after!)]];
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const [name, build] of r % 2 ? [...builds].reverse() : builds) {
      const stages = await measureStages(batch, Number(values.bodies), Number(values.concurrency), build);
      console.log(
        `${values.before ? `${name}, ` : ''}batch ${batch}, round ${r + 1}: ${Object.entries(stages)
          .map(([k, v]) => `${k} ${round(v.us, 2)} µs${v.bytes ? ` (${round(v.bytes, 0)} B written)` : ''}`)
          .join(', ')}`,
      );
    }
  }
  console.log(`peak RSS (VmHWM) of the bench process, ${values.before ? "both builds' stages" : 'every stage'} in it: ${peakRssMb(process.pid)} MiB`);
}
