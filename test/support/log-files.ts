import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compactLogs, createEndpoints, type Endpoints, type EndpointsOptions } from '../../src/index';

/** A temporary folder for one test file's logs, removed by `cleanup`. */
export function tempDir(prefix = 'le-test-'): { dir: string; path: (...parts: string[]) => string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, path: (...parts) => join(dir, ...parts), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes events (objects are JSON-encoded, strings written as they are) one per line. */
export function writeLines(file: string, lines: ReadonlyArray<object | string>): string {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}

let seq = 0;

/** A gateway log event (docs/semantics.md, "Event shapes"). */
export function edgeEvent(e: { timestamp: string | number; project?: string; path?: string; url?: string; id?: string; message?: string; extra?: Record<string, unknown> }): Record<string, unknown> {
  const project = e.project ?? 'abc';
  const path = e.path ?? '/rest/v1/todos';
  return {
    id: e.id ?? `edge-${String(++seq).padStart(6, '0')}`,
    timestamp: e.timestamp,
    event_message: e.message ?? `GET | 200 | 203.0.113.7 | https://${project}.supabase.co${path}`,
    project,
    metadata: {
      request: { method: 'GET', path, url: e.url ?? `https://${project}.supabase.co${path}`, host: `${project}.supabase.co` },
      response: { status_code: 200, origin_time: 12 },
      ...e.extra,
    },
  };
}

/** An edge-function invocation event (docs/semantics.md, "Event shapes"). */
export function functionEvent(e: { timestamp: string | number; project?: string; functionId?: string; ms?: number | null; status?: number | null; id?: string }): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    project_ref: e.project ?? 'abc',
    function_id: e.functionId ?? 'f1',
    deployment_id: 'abc_f1_3',
    version: '3',
    request: { method: 'POST', pathname: '/hello' },
  };
  if (e.ms !== null) metadata.execution_time_ms = e.ms ?? 10;
  if (e.status !== null) metadata.response = { status_code: e.status ?? 200 };
  return { id: e.id ?? `fn-${String(++seq).padStart(6, '0')}`, timestamp: e.timestamp, event_message: 'POST | 200 | /hello', metadata };
}

/** Endpoints over the given sources with a clock the test moves. */
export async function endpointsAt(sources: EndpointsOptions['sources'], now: string, extra: Partial<EndpointsOptions> = {}): Promise<{ ep: Endpoints; setNow: (iso: string) => void }> {
  let clock = new Date(now);
  const ep = await createEndpoints({ sources, now: () => clock, cache: false, ...extra });
  return { ep, setNow: (iso) => (clock = new Date(iso)) };
}

/**
 * The same gateway events read whole (one NDJSON file) and compacted by day (a dataset), each by
 * an instance with the clock at `now`: a read that goes day by day must answer as the whole one.
 */
export async function wholeAndByDay(tmp: ReturnType<typeof tempDir>, events: readonly object[], now: string): Promise<{ whole: Endpoints; byDay: Endpoints }> {
  writeLines(tmp.path('ndjson', 'all.ndjson'), events);
  await compactLogs({ source: 'edgeLogs', inputs: tmp.path('ndjson', 'all.ndjson'), outDir: tmp.path('dataset') });
  const { ep: whole } = await endpointsAt({ edgeLogs: tmp.path('ndjson', 'all.ndjson') }, now);
  const { ep: byDay } = await endpointsAt({ edgeLogs: tmp.path('dataset') }, now);
  return { whole, byDay };
}

/** `iso` moved by a number of microseconds, as an ISO string with six fractional digits. */
export function shiftMicros(iso: string, micros: number): string {
  const base = BigInt(Date.parse(iso)) * 1000n + BigInt(iso.match(/\.\d{3}(\d{3})/)?.[1] ?? '0');
  const t = base + BigInt(micros);
  const ms = t / 1000n - (t % 1000n < 0n ? 1n : 0n);
  const sub = t - ms * 1000n;
  return `${new Date(Number(ms)).toISOString().slice(0, 23)}${sub.toString().padStart(3, '0')}Z`;
}
