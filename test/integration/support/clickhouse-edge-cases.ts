import { edgeEvent, functionEvent } from '../../support/log-files';

const NOW_MICROS = 1_795_262_400_000_000n; // 2026-11-21T12:00:00Z
const SECOND = 1_000_000n;
const iso = (t: bigint) => {
  const ms = Number(t / 1000n);
  return `${new Date(ms).toISOString().slice(0, 19)}.${(t % SECOND).toString().padStart(6, '0')}Z`;
};

/**
 * Hand-made events for what generated data rarely holds, in projects of their own (`edgecase`,
 * `quantiles`): the differential test loads them into ClickHouse through `insertEvents` (the
 * ingest path) and gives DuckDB the same objects as an NDJSON file.
 */
export function edgeCaseEvents(): { edge: object[]; functions: object[] } {
  const edge: object[] = [
    // `.` must not match a newline ((?-s)): the pattern `rest.v1` matches the first URL only.
    edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 60n * SECOND), id: 'nl-1', url: 'https://edgecase.supabase.co/rest/v1/x' }),
    edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 61n * SECOND), id: 'nl-2', url: 'https://edgecase.supabase.co/rest\nv1/x' }),
    // Ties on the timestamp: ordered by id, NULL last.
    { ...edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 120n * SECOND) }), id: null },
    edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 120n * SECOND), id: 'tie-b' }),
    edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 120n * SECOND), id: 'tie-a' }),
    // Timestamps in every form, on and beside boundaries; nanoseconds truncated.
    edgeEvent({ project: 'edgecase', timestamp: Number(NOW_MICROS - 3600n * SECOND), id: 'num-micros' }),
    edgeEvent({ project: 'edgecase', timestamp: '2026-11-21T16:59:59.999999+05:00', id: 'offset' }),
    edgeEvent({ project: 'edgecase', timestamp: '2026-11-21T11:00:00.123456789Z', id: 'nanos' }),
    edgeEvent({ project: 'edgecase', timestamp: '2026-11-21T10:00:00', id: 'no-zone' }),
    edgeEvent({ project: 'edgecase', timestamp: 'not a time', id: 'bad-time' }),
    // Text that is hard on escaping and encodings, kept whole in metadata.
    edgeEvent({
      project: 'edgecase',
      timestamp: iso(NOW_MICROS - 5n * SECOND),
      id: "q'uote\\back\ttab",
      message: 'ünïcødé 🚀 "quoted" \\ back \u0000 nul',
      extra: { nested: { list: [1, 2.5, null, true, 'x'], big: 12345678901234567890, tiny: 1e-300 }, 'key with space': '\n\t' },
    }),
    // Missing fields: no URL (never counted), no path (counted, in no class), no project.
    { id: 'no-url', timestamp: iso(NOW_MICROS - 7n * SECOND), event_message: 'x', project: 'edgecase', metadata: { request: { path: '/rest/v1/a' } } },
    { id: 'no-path', timestamp: iso(NOW_MICROS - 8n * SECOND), event_message: 'x', project: 'edgecase', metadata: { request: { url: 'https://edgecase.supabase.co/storage/v1' } } },
    { id: 'no-project', timestamp: iso(NOW_MICROS - 9n * SECOND), event_message: 'x', metadata: { request: { url: 'https://edgecase.supabase.co/auth/v1', path: '/auth/v1' } } },
    // Several classes at once, and an empty URL (matched by patterns that match '').
    edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 10n * SECOND), path: '/rest/v1/rpc/auth/realtime/storage', id: 'all-classes' }),
    edgeEvent({ project: 'edgecase', timestamp: iso(NOW_MICROS - 11n * SECOND), url: '', id: 'empty-url' }),
    edgeEvent({ project: 'EdgeCase', timestamp: iso(NOW_MICROS - 12n * SECOND), id: 'upper' }),
  ];
  const functions: object[] = [
    functionEvent({ project: 'edgecase', functionId: 'f-a', timestamp: iso(NOW_MICROS - 30n * SECOND), ms: 0.1, status: 399 }),
    functionEvent({ project: 'edgecase', functionId: 'f-a', timestamp: iso(NOW_MICROS - 31n * SECOND), ms: 0.2, status: 400 }),
    functionEvent({ project: 'edgecase', functionId: 'f-a', timestamp: iso(NOW_MICROS - 32n * SECOND), ms: null, status: null }),
    functionEvent({ project: 'edgecase', functionId: 'f-b', timestamp: iso(NOW_MICROS - 33n * SECOND), ms: 1e-9, status: 503 }),
    functionEvent({ project: 'edgecase', functionId: 'f-b', timestamp: iso(NOW_MICROS - 34n * SECOND), ms: 123456.789012345, status: 200 }),
    // Only NULL execution times in a bucket: null statistics, still counted.
    functionEvent({ project: 'edgecase', functionId: 'f-c', timestamp: iso(NOW_MICROS - 7200n * SECOND), ms: null, status: 500 }),
    // Strings where numbers are due: read as DuckDB reads them.
    {
      id: 'str-ms',
      timestamp: iso(NOW_MICROS - 35n * SECOND),
      event_message: 'x',
      metadata: { project_ref: 'edgecase', function_id: 'f-a', execution_time_ms: '42.5', response: { status_code: '500' } },
    },
    { id: 'no-fn', timestamp: iso(NOW_MICROS - 36n * SECOND), event_message: 'x', metadata: { project_ref: 'edgecase', execution_time_ms: 3 } },
    { id: 'no-project', timestamp: iso(NOW_MICROS - 37n * SECOND), event_message: 'x', metadata: { function_id: 'f-a', execution_time_ms: 3 } },
  ];
  // Every bucket size from 1 to 45 values for the percentile ranks: hour h before now holds h
  // invocations with distinct, shuffled execution times.
  for (let h = 1n; h <= 45n; h++) {
    for (let i = 0n; i < h; i++) {
      const ms = Number((i * 7919n) % h) + Number(h) / 100;
      functions.push(functionEvent({ project: 'quantiles', functionId: `q${h % 3n}`, timestamp: iso(NOW_MICROS - h * 3600n * SECOND + i * SECOND), ms, status: i % 5n === 0n ? 500 : 200 }));
    }
  }
  return { edge, functions };
}
