import type { Prng } from '../../src/fixtures/prng';

/**
 * A gateway event as the ingest bench sends it (bench/ingest.ts), as Vector or a relay sends one:
 * about 600 bytes, no id, its own timestamp (`i` milliseconds after 2026-11-21 10:00 UTC), one of
 * 20 projects and four paths. The compaction memory test compacts the same shape.
 *
 * @example
 * const events = Array.from({ length: 100 }, (_, i) => gatewayBenchEvent(new Prng(1), i));
 */
export function gatewayBenchEvent(prng: Prng, i: number): Record<string, unknown> {
  const project = `proj${prng.int(20)}`;
  const path = prng.pick(['/rest/v1/todos', '/auth/v1/token', '/storage/v1/object/public/a.png', '/realtime/v1/websocket']);
  return {
    timestamp: new Date(Date.UTC(2026, 10, 21, 10) + i).toISOString(),
    event_message: `GET | 200 | 203.0.113.${prng.int(250)} | https://${project}.supabase.co${path}?select=*`,
    project,
    metadata: {
      request: {
        method: 'GET',
        path,
        search: '?select=*',
        url: `https://${project}.supabase.co${path}?select=*`,
        host: `${project}.supabase.co`,
        headers: { user_agent: 'supabase-js/2.45.4', cf_connecting_ip: `203.0.113.${prng.int(250)}`, x_client_info: 'supabase-js-web/2.45.4' },
        cf: { country: 'DE', city: 'Zürich', asn: 3320 },
      },
      response: { status_code: prng.pick([200, 200, 200, 201, 404, 500]), origin_time: prng.int(300), headers: { content_type: 'application/json' } },
    },
  };
}

/**
 * The paths compaction discovers in these events beyond the gateway's declared ones (present in
 * every event, one type each): with them the gateway is written with 14 typed fields, as
 * compaction met the ingest bench's events.
 *
 * @example
 * const widened = withTypedPaths(edgeLogs, GATEWAY_BENCH_DISCOVERED); // 14 typed fields
 */
export const GATEWAY_BENCH_DISCOVERED = [
  'request.cf.asn',
  'request.cf.city',
  'request.cf.country',
  'request.headers.cf_connecting_ip',
  'request.headers.user_agent',
  'request.headers.x_client_info',
  'request.host',
  'request.url',
  'response.headers.content_type',
] as const;
