import { tableFromIPC } from 'apache-arrow';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import { eventTimestampMicros } from '../src/time/event-timestamp';
import { memoryIO, runCli } from './support/cli';
import { edgeEvent, functionEvent, tempDir, writeLines } from './support/log-files';

const NOW = '2026-11-21T12:00:00Z';
const tmp = tempDir('le-cli-');
let sources: string[];

beforeAll(() => {
  writeLines(tmp.path('edge.ndjson'), [
    edgeEvent({ id: 'e1', timestamp: '2026-11-21T11:00:00.123456Z', path: '/rest/v1/todos' }),
    edgeEvent({ id: 'e2', timestamp: '2026-11-21T11:30:00Z', path: '/auth/v1/user' }),
  ]);
  writeLines(tmp.path('fn.ndjson'), [functionEvent({ timestamp: '2026-11-21T11:00:01Z', ms: 10 }), functionEvent({ timestamp: '2026-11-21T11:00:02Z', ms: 30, status: 503 })]);
  sources = ['--edge-logs', tmp.path('edge.ndjson'), '--function-logs', tmp.path('fn.ndjson')];
});

afterAll(() => tmp.cleanup());

describe('log-endpoints query, as a process', () => {
  it('prints a table evaluated at --now, and JSON in the envelope of the HTTP body', async () => {
    const table = await runCli(['query', 'logs.all', '--param', 'project=abc', '-p', 'project_tier=FREE', '--now', NOW, ...sources]);
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+timestamp\s+event_message\s+metadata$/);
    expect(lines[2]).toMatch(/^e2\s+2026-11-21T11:30:00\.000000Z/);
    expect(lines[3]).toMatch(/^e1\s+2026-11-21T11:00:00\.123456Z/);
    expect(lines.at(-1)).toBe('(2 rows)');

    const json = await runCli(['query', '3e97a72c-f5e4-4378-80ac-22ce14543451', '-p', 'project=abc', '-p', 'interval=1hr', '--format', 'json', '--now', NOW, ...sources]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      result: [
        {
          timestamp: '2026-11-21T11:00:00.000000Z',
          min_execution_time: 10,
          max_execution_time: 30,
          avg_execution_time: 20,
          p95_execution_time: 30,
          p99_execution_time: 30,
          count: 2,
          error_count: 1,
        },
      ],
    });
  });

  it('a parameter the endpoint refuses: exit 2, one clear line, no stack', async () => {
    const r = await runCli(['query', 'usage.api-counts', '-p', 'project=abc', '-p', 'interval=weekly', ...sources]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error [invalid_parameter]: Parameter "interval" must be one of hourly, daily, minutely, 15min, 30min, 1hr, 3hr, 1day, 3day, 7day.\n');
  });

  it('writes an Arrow IPC stream when redirected', async () => {
    const r = await runCli(['query', 'usage.api-counts', '-p', 'project=abc', '-p', 'interval=daily', '-f', 'arrow', '--now', NOW, ...sources]);
    expect(r.code).toBe(0);
    const table = tableFromIPC(Buffer.from(r.stdout, 'latin1'));
    expect(table.numRows).toBe(1);
    expect([...table.getChild('total_rest_requests')!]).toEqual([1n]);
    expect(String(table.schema.fields[0]!.type)).toBe('Timestamp<MICROSECOND, UTC>');
  });
});

async function run(...argv: string[]) {
  const { io, out } = memoryIO();
  const code = await main(argv, io, '9.9.9');
  return { code, ...out };
}

describe('log-endpoints, in process', () => {
  it('csv and ndjson formats through the shared converters', async () => {
    const csv = await run('query', 'logs.all', '-p', 'project=abc', '-p', 'project_tier=FREE', '-f', 'csv', '--now', NOW, ...sources);
    expect(csv.code).toBe(0);
    expect(csv.stdout.split('\r\n')[0]).toBe('id,timestamp,event_message,metadata');
    expect(csv.stdout.split('\r\n')).toHaveLength(4);
    const ndjson = await run('query', 'logs.all', '-p', 'project=abc', '-p', 'project_tier=FREE', '-f', 'ndjson', '--now', NOW, ...sources);
    expect(
      ndjson.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(['e2', 'e1']);
  });

  it('--help on every command, exit 0', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['help', 'serve'], ['serve', '--help'], ['query', '--help'], ['demo-data', '--help'], ['demo', '-h'], ['compact', '--help']]) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(0);
      expect(r.stdout, argv.join(' ')).toMatch(/^(Usage|log-endpoints)/);
    }
    expect((await run('serve', '--help')).stdout).toContain('--api-key <key>');
    expect((await run('--version')).stdout).toBe('9.9.9\n');
  });

  it('usage errors: exit 2 with the message and where to find help', async () => {
    const cases: [string[], RegExp][] = [
      [[], /Usage: log-endpoints <command>/],
      [['frobnicate'], /Unknown command "frobnicate"/],
      [['query', 'logs.all', '--bogus'], /Unknown option '--bogus'/],
      [['query', '-p', 'project=abc', ...['--edge-logs', 'x']], /Name the endpoint/],
      [['query', 'logs.all', '-p', 'project'], /--param takes name=value/],
      [['query', 'logs.all', '-p', 'project=a', '-p', 'project=b', '--edge-logs', 'x'], /given more than once/],
      [['query', 'logs.all', '-p', 'project=abc'], /--edge-logs <glob>/],
      [['query', 'logs.all', '-f', 'xml', '--edge-logs', 'x'], /--format must be one of table, json, csv, ndjson, arrow/],
      [['query', 'logs.all', '--now', 'yesterday', '--edge-logs', 'x'], /--now must be an ISO 8601 timestamp/],
      [['serve', '--edge-logs', 'x'], /No API key/],
      [['serve', '--edge-logs', 'x', '--api-key', 'k', '--port', '70000'], /--port must be a whole number from 0 to 65535/],
      [['demo-data', '--events', '-5'], /--events/],
      [['query', 'logs.all', '--memory-limit', 'lots', '--edge-logs', 'x'], /--memory-limit must be a size/],
      [['compact', '--source', 'db', '--input', 'x', '--out', 'y'], /--source must name a source: edgeLogs \(edge_logs, edge\), functionEdgeLogs \(function_edge_logs, functions\), not "db"/],
      [['compact', '--source', 'edge', '--out', 'y'], /--input <glob>/],
      [['serve', '--edge-logs', 'x', '--api-key', 'k', '--threads', '0'], /--threads must be a whole number from 1/],
      [['serve', '--edge-logs', 'x', '--api-key', 'k', '--wal-segment-bytes', '5'], /--wal-segment-bytes is for ingest: add --data-dir/],
      // clickhouse serve reads the same server flags as serve (checked before any server is asked).
      [['clickhouse', 'serve', '--url', 'http://127.0.0.1:9', '--api-key', 'k', '--dashboard', '--shutdown-grace', 'soon'], /--shutdown-grace must be a number of seconds/],
      [['clickhouse', 'serve', '--url', 'http://127.0.0.1:9'], /No API key/],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.stderr, argv.join(' ')).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('an unknown endpoint is exit 2 not_found', async () => {
    const r = await run('query', 'no.such', ...sources);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error \[not_found\]: No endpoint is named or identified by "no.such"/);
  });

  it('demo-data writes a deterministic dataset leading up to --now, with progress on stderr', async () => {
    const argv = ['demo-data', '--events', '300', '--now', NOW, '--seed', '7'];
    const first = await run(...argv, '--out', tmp.path('demo-a'));
    const second = await run(...argv, '--out', tmp.path('demo-b'));
    expect(second.code).toBe(0);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/Writing demo logs: 100% \(450\/450\)/);
    expect(first.stdout).toContain(tmp.path('demo-a', 'edge', 'edge-logs.ndjson'));
    const a = readFileSync(tmp.path('demo-a', 'edge', 'edge-logs.ndjson'), 'utf8');
    expect(a.trimEnd().split('\n')).toHaveLength(300);
    expect(a).toBe(readFileSync(tmp.path('demo-b', 'edge', 'edge-logs.ndjson'), 'utf8'));
    expect(
      readFileSync(tmp.path('demo-a', 'functions', 'function-logs.ndjson'), 'utf8')
        .trimEnd()
        .split('\n'),
    ).toHaveLength(150);
    // Nothing in the future of --now (this seed put two events up to 15 minutes after it before).
    const events = ['edge/edge-logs.ndjson', 'functions/function-logs.ndjson'].flatMap((f) => readFileSync(tmp.path('demo-a', f), 'utf8').trimEnd().split('\n'));
    expect(events.filter((line) => eventTimestampMicros(JSON.parse(line).timestamp)! > BigInt(Date.parse(NOW)) * 1000n)).toEqual([]);
    // The data answers the endpoints at the same instant.
    const project = /Projects \(busiest first\): (\w+)/.exec(first.stdout)![1]!;
    const q = await run('query', 'usage.api-counts', '-p', `project=${project}`, '-p', 'interval=daily', '-f', 'json', '--now', NOW, '--edge-logs', tmp.path('demo-a', 'edge', '*.ndjson'));
    expect(q.code).toBe(0);
    expect(JSON.parse(q.stdout).result.length).toBeGreaterThan(0);
    expect(existsSync(tmp.path('demo-a', 'edge', 'edge-logs.parquet'))).toBe(false);
  });
});

describe('log-endpoints compact', () => {
  it('writes the Parquet layout, reports counts, and the result answers like the NDJSON', async () => {
    const out = tmp.path('compacted');
    const r = await run('compact', '--source', 'edge', '--input', tmp.path('edge.ndjson'), '--out', out);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Compacted 1 file: 2 events in 1 Parquet files under ${out}.\n`);
    expect(r.stderr).toMatch(/Writing/);
    const again = await run('compact', '--source', 'edge', '--input', tmp.path('edge.ndjson'), '--out', out);
    expect(again.stdout).toBe(`Nothing new: every event of the inputs is in ${out} already.\n`);
    const args = ['query', 'logs.all', '-p', 'project=abc', '-p', 'project_tier=FREE', '-f', 'json', '--now', NOW];
    const fromParquet = await run(...args, '--edge-logs', `${out}/**/*.parquet`);
    const fromNdjson = await run(...args, '--edge-logs', tmp.path('edge.ndjson'));
    expect(JSON.parse(fromParquet.stdout).result).toHaveLength(2);
    expect(fromParquet.stdout).toBe(fromNdjson.stdout);
  });

  it('refuses edge logs compacted as functions: exit 2, one line that says what to do', async () => {
    const r = await run('compact', '--source', 'functions', '--input', tmp.path('edge.ndjson'), '--out', tmp.path('wrong-source'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^error \[invalid_option\]: None of the 2 events sampled looks like an event of functionEdgeLogs \(function_edge_logs\); 2 look like events of edgeLogs \(edge_logs\)\. Did you mean --source edge\?/m,
    );
  });
});

describe('globs that match nothing are told', () => {
  it('query and compact warn on stderr for each empty glob, and for a log not given at all', async () => {
    const typo = tmp.path('no-such-folder', '*.ndjson');
    const q = await run('query', 'logs.all', '-p', 'project=abc', '-p', 'project_tier=FREE', '-f', 'json', '--now', NOW, '--edge-logs', typo, '--edge-logs', tmp.path('edge.ndjson'));
    expect(q.code).toBe(0);
    expect(q.stderr).toContain(`warning: --edge-logs '${typo}' matches no log file`);
    const missing = await run('query', 'functions.invocation-stats', '-p', 'project=abc', '-p', 'interval=1day', '-f', 'json', '--now', NOW, '--edge-logs', tmp.path('edge.ndjson'));
    expect(missing.code).toBe(0);
    expect(missing.stderr).toContain('warning: no --function-logs given: functions.invocation-stats will answer no rows');
    const c = await run('compact', '--source', 'edge', '--input', typo, '--out', tmp.path('typo-out'));
    expect(c.code).toBe(0);
    expect(c.stderr).toContain(`warning: --input '${typo}' matches no log file`);
    expect(c.stdout).toBe('No input to compact.\n');
  });
});
