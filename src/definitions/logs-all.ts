import { querySql } from '../sql/query-files';
import { InvalidParameterError } from '../errors';
import { parseIsoMicros } from '../time/iso';
import { subtractSpan, type Span } from '../time/units';
import { dateToMicros } from '../time/iso';
import type { DefinitionParams, DefinitionRow } from './definition';
import { defineEndpoint } from './define-endpoint';
import { p } from './params';

/** Project tiers of logs.all; any other value (or none) behaves like `FREE`. */
export type ProjectTier = 'FREE' | 'PRO' | 'PAYG' | 'ENTERPRISE';

const RETENTION: Record<ProjectTier, Span> = {
  FREE: { days: 1 },
  PRO: { days: 7 },
  PAYG: { days: 90 },
  ENTERPRISE: { days: 90 },
};

/** The query's own row limit, below the endpoint's max rows. */
const LIMIT = 100;

/** logs.all: the newest gateway log entries of a project within its tier's retention window (docs/semantics.md). */
export const logsAll = defineEndpoint({
  name: 'logs.all',
  id: '3e715bbd-1626-41ec-8a34-3544ab01d99e',
  description: "The newest gateway log entries of one project within its tier's retention window.",
  maxRows: 1000,
  cache: 'never',
  params: {
    project: p.text().describe('Project reference; only entries of this project.'),
    // Supabase Studio never sends it: absent or empty is FREE, like any other value; with
    // `tierWindow: false` (the Supabase preset) it is ignored and there is no window.
    project_tier: p
      .oneOf(Object.keys(RETENTION) as ProjectTier[], { otherwise: 'FREE' })
      .default('FREE')
      .describe('Retention window: FREE 1 day, PRO 7 days, PAYG and ENTERPRISE 90 days. Absent, empty or any other value behaves like FREE.'),
    iso_timestamp_start: p.isoTimestamp().optional().describe('Only entries strictly after this ISO 8601 instant.'),
    iso_timestamp_end: p.isoTimestamp().optional().describe('Only entries at or before this ISO 8601 instant (not before iso_timestamp_start).'),
  },
  sql: { duckdb: querySql('duckdb', 'logs.all'), clickhouse: querySql('clickhouse', 'logs.all') },
  // A caller's SQL (sandboxable) reads a table per source of the instance, limited like the rows.
  sourceTables: { duckdb: querySql('duckdb', 'logs.all.tables'), clickhouse: querySql('clickhouse', 'logs.all.tables') },
  projectParam: 'project',
  tierParam: 'project_tier',
  check: ({ iso_timestamp_start: start, iso_timestamp_end: end }) => {
    // An empty answer would hide the mistake (start and end swapped): say so instead.
    if (start && end && parseIsoMicros(start)! > parseIsoMicros(end)!) {
      throw new InvalidParameterError('iso_timestamp_start', 'Parameter "iso_timestamp_start" is after "iso_timestamp_end": the range holds no instant.');
    }
  },
  bind: ({ project_tier, iso_timestamp_start, iso_timestamp_end }, { now }) => {
    // NULL when the instance has no tier windows (`tierParam` below): only the bounds limit the rows.
    const tier = project_tier as ProjectTier | null;
    const retained = tier === null ? null : dateToMicros(subtractSpan(now, RETENTION[tier]));
    const start = iso_timestamp_start === null ? null : parseIsoMicros(iso_timestamp_start);
    const end = iso_timestamp_end === null ? null : parseIsoMicros(iso_timestamp_end);
    // Both lower bounds are exclusive, so the later one is the bound; NULL is no lower bound.
    const after = retained === null || (start !== null && start > retained) ? start : retained;
    return { after: after === null ? null : { timestamp: after }, until: end === null ? null : { timestamp: end }, limit: LIMIT };
  },
  notBefore: 'after',
  newestFirst: { limit: 'limit', until: 'until' },
  columns: {
    id: { type: 'text', nullable: true, description: 'Event id.' },
    timestamp: { type: 'timestamp', description: 'Event time.' },
    event_message: { type: 'text', nullable: true, description: 'The log line.' },
    metadata: { type: 'json', nullable: true, description: 'The stored metadata object.' },
  },
});

/** Parameters of logs.all. */
export type LogsAllParams = DefinitionParams<typeof logsAll>;
/** One gateway log entry of logs.all. */
export type LogsAllRow = DefinitionRow<typeof logsAll>;
