/**
 * What holds the heap at two moments of a run, by allocation site: heaptrack's data of a server
 * (its interpreted stream, zstd-compressed) cut at `--idle-at` and `--after-at` seconds of the
 * process, each cut's allocations still live read out by `heaptrack_print`, and the growth put
 * in holders by the backtrace (the first rule that matches any frame). Prints the process's RSS
 * as heaptrack sampled it every 5 s first, to pick the two moments (the load's start and its end
 * plus 60 s).
 *
 * Capture (Debian's heaptrack; the server under its preload, the stream through a fifo):
 *
 *   mkfifo /tmp/ht.fifo
 *   /usr/lib/heaptrack/libexec/heaptrack_interpret < /tmp/ht.fifo | zstd -c > run.zst &
 *   FOOTPRINT_SMAPS=run npx tsx bench/footprint.ts --rate 1000 --seconds 90 \
 *     --env LD_PRELOAD=/usr/lib/heaptrack/libheaptrack_preload.so --env DUMP_HEAPTRACK_OUTPUT=/tmp/ht.fifo
 *   npx tsx bench/heaptrack-live.ts run.zst --idle-at 5 --after-at 158
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'idle-at': { type: 'string' }, 'after-at': { type: 'string' } } });
const data = positionals[0];
if (!data) throw new Error('usage: npx tsx bench/heaptrack-live.ts <run.zst> [--idle-at s --after-at s]');

/** Holders, the first whose pattern matches a frame of the backtrace. */
const HOLDERS: Array<[string, RegExp]> = [
  ["DuckDB's buffer manager: its eviction queues' nodes", /EvictionQueue::|BufferPool::AddToEvictionQueue/],
  ["DuckDB's buffer manager: block handles of memory (the tables' appends)", /BlockHandle::BlockHandle\(duckdb::BlockManager&, long, duckdb::MemoryTag, duckdb::unique_ptr/],
  ["DuckDB's buffer manager: block handles of a database file's blocks", /BlockHandle::BlockHandle|RegisterBlock/],
  ['DuckDB: Parquet footers and readers', /duckdb_parquet::|ParquetReader|ParquetMetaData|ObjectCache/],
  ['DuckDB: prepared statements, their parse trees and plans', /Prepare|Binder::|Planner|Optimizer|::Copy\(\) const|SQLStatement::SQLStatement|PhysicalPlanGenerator|Transformer::/],
  ['DuckDB: catalog (tables, views, functions)', /CatalogEntry|Catalog::|CatalogSet/],
  ["DuckDB: tables' storage (row groups, segments)", /RowGroup|ColumnData|ColumnSegment|DataTable|SegmentTree|BaseStatistics|TableStatistics|LocalStorage/],
  ['DuckDB: values bound to prepared statements', /duckdb::Value::/],
  ['DuckDB: other', /duckdb/],
  ['V8: WebAssembly code', /wasm::/],
  ["Node: worker threads' messages", /node::worker::|SerializedData|MessagePort/],
  ['V8: other', /v8::/],
  ['Node: other', /node::|uv_/],
];

/** Writes the interpreted stream up to the first timestamp at or after `seconds` (heaptrack's `c` lines: ms, hex). */
async function cut(seconds: number, out: string): Promise<void> {
  const limit = seconds * 1000;
  const reader = spawn('zstd', ['-dc', data!], { stdio: ['ignore', 'pipe', 'inherit'] });
  const writer = spawn('zstd', ['-q', '-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
  writer.stdout.pipe(createWriteStream(out));
  for await (const line of createInterface({ input: reader.stdout })) {
    if (line.startsWith('c ') && parseInt(line.slice(2), 16) >= limit) break;
    if (!writer.stdin.write(`${line}\n`)) await new Promise((r) => writer.stdin.once('drain', r));
  }
  reader.kill();
  writer.stdin.end();
  await new Promise((r) => writer.once('close', r));
}

/** Live bytes per backtrace at the end of a cut (`heaptrack_print`'s flame-graph stacks, cost "leaked"). */
async function live(file: string, stacks: string): Promise<Map<string, number>> {
  spawnSync('heaptrack_print', ['-f', file, '-l', '0', '-p', '0', '-a', '0', '-T', '0', '--flamegraph-cost-type', 'leaked', '-F', stacks], { stdio: 'ignore' });
  const bytes = new Map<string, number>();
  // Read line by line: the stacks of a long run pass 512 MB.
  for await (const line of createInterface({ input: createReadStream(stacks) })) {
    const at = line.lastIndexOf(' ');
    if (at > 0) bytes.set(line.slice(0, at), (bytes.get(line.slice(0, at)) ?? 0) + Number(line.slice(at + 1)));
  }
  return bytes;
}

const holderOf = (stack: string) => HOLDERS.find(([, pattern]) => pattern.test(stack))?.[0] ?? 'other';
const threadOf = (stack: string) =>
  stack.startsWith('_start') ? 'main thread' : /ThreadPoolWork|threadpool\.c|QueryWorker|PrepareWorker|Binder::/.test(stack) ? "libuv's pool (DuckDB's calls from Node)" : 'other threads';

const timeline: string[] = [];
let at = 0;
let shown = -5;
for await (const line of createInterface({ input: spawn('zstd', ['-dc', data], { stdio: ['ignore', 'pipe', 'inherit'] }).stdout })) {
  if (line.startsWith('c ')) at = parseInt(line.slice(2), 16) / 1000;
  else if (line.startsWith('R ') && at - shown >= 5) {
    shown = Math.floor(at);
    timeline.push(`${shown}s ${((parseInt(line.slice(2), 16) * 4096) / 2 ** 20).toFixed(0)}`);
  }
}
console.log(`RSS (MiB) heaptrack sampled, process time: ${timeline.join(', ')}`);
if (values['idle-at'] && values['after-at']) {
  const dir = await mkdtemp(join(tmpdir(), 'le-heaptrack-'));
  try {
    const [idle, after] = [join(dir, 'idle.zst'), join(dir, 'after.zst')];
    await cut(Number(values['idle-at']), idle);
    await cut(Number(values['after-at']), after);
    const [before, later] = [await live(idle, join(dir, 'idle.stacks')), await live(after, join(dir, 'after.stacks'))];
    const rows = new Map<string, [number, number]>();
    const threads = new Map<string, number>();
    for (const [map, side] of [
      [before, 0],
      [later, 1],
    ] as const) {
      for (const [stack, bytes] of map) {
        const row = rows.get(holderOf(stack)) ?? [0, 0];
        row[side] += bytes;
        rows.set(holderOf(stack), row);
        threads.set(threadOf(stack), (threads.get(threadOf(stack)) ?? 0) + (side ? bytes : -bytes));
      }
    }
    const mib = (n: number) => (n / 2 ** 20).toFixed(2);
    console.log(`\n| holder (heaptrack's backtrace) | live at ${values['idle-at']} s (MiB) | live at ${values['after-at']} s | grown |\n|---|---:|---:|---:|`);
    for (const [name, [a, b]] of [...rows].sort((x, y) => y[1][1] - y[1][0] - (x[1][1] - x[1][0]))) console.log(`| ${name} | ${mib(a)} | ${mib(b)} | ${b >= a ? '+' : ''}${mib(b - a)} |`);
    const total = [...rows.values()].reduce((s, [a, b]) => [s[0]! + a, s[1]! + b], [0, 0]);
    console.log(`| all | ${mib(total[0]!)} | ${mib(total[1]!)} | +${mib(total[1]! - total[0]!)} |`);
    console.log(`\ngrown by the thread that allocated: ${[...threads].map(([t, n]) => `${t} ${n >= 0 ? '+' : ''}${mib(n)} MiB`).join(', ')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
