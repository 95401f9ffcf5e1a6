/**
 * What the memory tables keep of the bodies they inserted once the inserts are done: one checkout's
 * memory tables in a fresh process (as the engine attaches them), `--bodies` bodies of about
 * `--body-mib` MiB into each built-in source, then the allocator trimmed and the process's resident
 * memory read. Run it once per checkout, alternated, under the compose's glibc settings
 * (docs/supabase.md): the rows inserted are the same, so what differs is what each build holds.
 *
 *   MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_TOP_PAD_=0 \
 *     npx tsx bench/held-bodies.ts --checkout /path/to/checkout --edge edge.ndjson --functions functions.ndjson [--body-mib 4] [--bodies 3]
 */
import { createReadStream, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    checkout: { type: 'string', default: '.' },
    edge: { type: 'string' },
    functions: { type: 'string' },
    'body-mib': { type: 'string', default: '4' },
    bodies: { type: 'string', default: '3' },
  },
});
if (!args.edge || !args.functions) throw new Error('--edge and --functions are required');
const bodyBytes = Number(args['body-mib']) * 2 ** 20;
const bodies = Number(args.bodies);

/** `count` bodies of whole NDJSON lines of about `bodyBytes` each, from the start of a file. */
async function bodiesOf(path: string, count: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let lines: string[] = [];
  let size = 0;
  for await (const line of createInterface({ input: createReadStream(resolve(path)), crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    lines.push(line);
    size += line.length + 1;
    if (size < bodyBytes) continue;
    out.push(Buffer.from(`${lines.join('\n')}\n`));
    lines = [];
    size = 0;
    if (out.length === count) break;
  }
  return out;
}

const status = (key: string): number => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;
const root = resolve(args.checkout);
const { MemoryTables } = (await import(join(root, 'src', 'managed', 'memory-tables.ts'))) as typeof import('../src/managed/memory-tables');
const { TIMESTAMP_MACROS } = (await import(join(root, 'src', 'duckdb', 'source-relations.ts'))) as typeof import('../src/duckdb/source-relations');
const { BUILT_IN_SOURCE_SET } = (await import(join(root, 'src', 'sources', 'built-ins.ts'))) as typeof import('../src/sources/built-ins');
const { trimAllocator } = (await import(join(root, 'src', 'duckdb', 'open-database.ts'))) as typeof import('../src/duckdb/open-database');
const { DuckDBInstance } = await import('@duckdb/node-api');

const feeds = { edgeLogs: await bodiesOf(args.edge, bodies), functionEdgeLogs: await bodiesOf(args.functions, bodies) };
const dir = await mkdtemp(join(tmpdir(), 'le-bench-held-bodies-'));
const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
const setup = await instance.connect();
for (const macro of TIMESTAMP_MACROS) await setup.run(macro);
const memory = new MemoryTables(BUILT_IN_SOURCE_SET, { folder: join(dir, 'memory') });
memory.attach(instance);
try {
  await trimAllocator(setup, 2);
  const before = status('VmRSS');
  let seq = 0;
  let bytes = 0;
  for (const [source, list] of Object.entries(feeds)) {
    for (const body of list) {
      await memory.insert(source as 'edgeLogs', ++seq, body);
      bytes += body.length;
    }
  }
  // The bodies are garbage now on the JavaScript side: collected (with --expose-gc) and the allocator trimmed.
  (globalThis as { gc?: () => void }).gc?.();
  await trimAllocator(setup, 2);
  const after = status('VmRSS');
  const duckdb = Number((await setup.runAndReadAll('SELECT sum(memory_usage_bytes) FROM duckdb_memory()')).getRows()[0]?.[0] ?? 0) / 2 ** 20;
  console.log(
    `| ${root} | ${seq} bodies, ${(bytes / 2 ** 20).toFixed(1)} MiB | ${before.toFixed(1)} | ${after.toFixed(1)} | +${(after - before).toFixed(1)} | ${duckdb.toFixed(1)} | ${loadavg()[0]!.toFixed(1)} |`,
  );
} finally {
  await memory.close();
  setup.closeSync();
  instance.closeSync();
  await rm(dir, { recursive: true, force: true });
}
