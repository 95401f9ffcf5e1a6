import { createEndpoints, supabasePreset, type Endpoints } from '../../src/index';

/**
 * Run by test/host-time-zone.test.ts in a process of its own, with the host's time zone set by
 * `TZ`: ingests GoTrue events whose timestamps carry offsets into managed storage at the data dir
 * given, then prints, as JSON, what the Explorer's SQL answers for them (the events are still in
 * the memory tables, read on the engine's own connections).
 */
const dataDir = process.argv[2]!;
const ep: Endpoints = await createEndpoints({ ...supabasePreset, storage: { dataDir }, now: () => new Date('2026-11-21T12:00:00Z'), cache: false });
try {
  await ep.ingest('gotrue.logs.prod', [
    { id: 'plus-two', timestamp: '2026-11-21T10:00:00+02:00', message: 'a', metadata: { level: 'info' } },
    { id: 'minus-five', timestamp: '2026-11-21T03:30:00.250-05:00', message: 'b', metadata: { level: 'info' } },
  ]);
  const sql = "select id, timestamp, format_timestamp('%Y-%m-%dT%H:%M:%S', timestamp) as text from auth_logs order by id";
  const answer = await ep.query('logs.all' as string, { iso_timestamp_start: '2026-11-21T00:00:00Z', iso_timestamp_end: '2026-11-21T12:00:00Z' }, { sql });
  process.stdout.write(JSON.stringify(answer.result));
} finally {
  await ep.close();
}
