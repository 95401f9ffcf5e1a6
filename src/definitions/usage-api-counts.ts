import { querySql } from '../sql/query-files';
import { prefilterLiteral, requiredLiteral } from '../sql/required-literal';
import { dateToMicros } from '../time/iso';
import { subtractSpan, UNIT_MICROS } from '../time/units';
import { intervalMeaning, type IntervalName } from './intervals';
import type { DefinitionParams, DefinitionRow } from './definition';
import type { EngineParam } from '../engine/engine';
import { defineEndpoint } from './define-endpoint';
import { p } from './params';

/**
 * The interval values of usage.api-counts: Logflare's own three, then the values Supabase Studio
 * and the Management API send (their meanings: src/definitions/intervals.ts). Any other value is
 * an error listing these.
 */
const USAGE_INTERVALS = ['hourly', 'daily', 'minutely', '15min', '30min', '1hr', '3hr', '1day', '3day', '7day'] as const satisfies readonly IntervalName[];

/**
 * The variant once compaction stores rollups, for hour and day buckets: usage.api-counts.hours.sql
 * when the window starts on the hour (every request then comes from the rollup), else
 * usage.api-counts.rollups.sql for day buckets (7 days), whose requests before the first whole hour
 * come from the raw files. Reading those costs about what the whole raw query of a 1-hour window
 * costs (every project's newest row groups), so an hour-bucket window that starts inside an hour
 * is answered faster raw. Minute buckets have no rollup. Where compaction has not stored the
 * rollups the engine runs the raw statement instead (docs/definitions.md, "Rollups").
 *
 * @example
 * rollupsWhenStored({ unit: 'hour', start: { timestamp: 1795258800000000n } }); // 'hours' (11:00:00)
 * rollupsWhenStored({ unit: 'hour', start: { timestamp: 1795260180000000n } }); // null (11:23:00)
 * rollupsWhenStored({ unit: 'day', start: { timestamp: 1795260180000000n } }); // 'rollups'
 */
export function rollupsWhenStored(bound: Readonly<Record<string, EngineParam>>): 'hours' | 'rollups' | null {
  const { unit, start } = bound;
  if (unit !== 'hour' && unit !== 'day') return null;
  const onTheHour = start !== null && typeof start === 'object' && start.timestamp % BigInt(UNIT_MICROS.hour) === 0n;
  if (onTheHour) return 'hours';
  return unit === 'day' ? 'rollups' : null;
}

/** Interval values of usage.api-counts; any other value is an error. */
export type UsageInterval = (typeof USAGE_INTERVALS)[number];

/** usage.api-counts: API requests per product area per time bucket (docs/semantics.md). */
export const usageApiCounts = defineEndpoint({
  name: 'usage.api-counts',
  id: '538d9361-e1e6-421a-953a-37a46d1b9e19',
  description: 'API requests of one project per product area (rest, storage, auth, realtime) per time bucket.',
  maxRows: 1000,
  cache: { ttlSeconds: 900, warmingSeconds: 300 },
  params: {
    project: p.re2().describe('RE2 regular expression searched in the request URL.'),
    interval: p
      .oneOf(USAGE_INTERVALS)
      .describe(
        'hourly (last hour, hour buckets), daily (last 7 days, day buckets), minutely (last 60 minutes, minute buckets); ' +
          '15min, 30min, 1hr (that span, minute buckets), 3hr, 1day, 3day (hour buckets), 7day (day buckets).',
      ),
  },
  sql: { duckdb: querySql('duckdb', 'usage.api-counts'), clickhouse: querySql('clickhouse', 'usage.api-counts') },
  // The edge log's rollups (src/sources/edge-logs.ts), stored at compaction; the engine runs the
  // raw statement where they are not stored (docs/definitions.md, "Rollups").
  variants: { hours: { duckdb: querySql('duckdb', 'usage.api-counts.hours') }, rollups: { duckdb: querySql('duckdb', 'usage.api-counts.rollups') } },
  variant: rollupsWhenStored,
  projectParam: 'project',
  bind: ({ interval, project }, { now }) => {
    const { span, unit } = intervalMeaning(interval as UsageInterval);
    // The plain text every match of the pattern holds, searched before it (required-literal.ts);
    // the rollup variant (usage.api-counts.rollups.sql) also needs it when the pattern is plain text.
    return {
      unit,
      start: { timestamp: dateToMicros(subtractSpan(now, span)) },
      project_literal: prefilterLiteral(project),
      project_required: project === null ? '' : requiredLiteral(project),
    };
  },
  notBefore: 'start',
  columns: {
    timestamp: { type: 'timestamp', description: 'Bucket start.' },
    total_rest_requests: { type: 'integer', description: 'Requests whose path contains /rest.' },
    total_storage_requests: { type: 'integer', description: 'Requests whose path contains /storage.' },
    total_auth_requests: { type: 'integer', description: 'Requests whose path contains /auth.' },
    total_realtime_requests: { type: 'integer', description: 'Requests whose path contains /realtime.' },
  },
});

/** Parameters of usage.api-counts. */
export type UsageApiCountsParams = DefinitionParams<typeof usageApiCounts>;
/** One time bucket of usage.api-counts. */
export type UsageApiCountsRow = DefinitionRow<typeof usageApiCounts>;
