import { dateToMicros, parseIsoMicros } from '../time/iso';
import { subtractSpan, type Span } from '../time/units';
import type { EndpointDefinition } from './definition';

/** Project tiers of logs.all; any other non-empty value behaves like `FREE`. */
export type ProjectTier = 'FREE' | 'PRO' | 'PAYG' | 'ENTERPRISE';

/** Parameters of logs.all. */
export interface LogsAllParams {
  /** Project reference; only entries of this project. */
  project: string;
  /** Selects the retention window; any other value behaves like `FREE`. */
  project_tier: ProjectTier | (string & {});
  /** ISO 8601; only entries strictly after it. Absent or empty: no lower bound. */
  iso_timestamp_start?: string;
  /** ISO 8601; only entries at or before it. Absent or empty: no upper bound. */
  iso_timestamp_end?: string;
}

/** One gateway log entry of logs.all. */
export interface LogsAllRow {
  id: string | null;
  /** ISO 8601 UTC with six fractional digits. */
  timestamp: string;
  event_message: string | null;
  /** The stored metadata object, whole. */
  metadata: Record<string, unknown> | null;
}

const RETENTION: Record<ProjectTier, Span> = {
  FREE: { days: 1 },
  PRO: { days: 7 },
  PAYG: { days: 90 },
  ENTERPRISE: { days: 90 },
};

/** The query's own row limit, below the endpoint's max rows. */
const LIMIT = 100;

export const logsAll: EndpointDefinition = {
  name: 'logs.all',
  id: '3e715bbd-1626-41ec-8a34-3544ab01d99e',
  description: 'The newest gateway log entries of one project within its tier\'s retention window.',
  maxRows: 1000,
  cache: null,
  sandboxed: false,
  params: [
    { name: 'project', required: true, format: 'text', description: 'Project reference; only entries of this project.' },
    {
      name: 'project_tier', required: true, format: 'text',
      description: 'Retention window: FREE 1 day, PRO 7 days, PAYG and ENTERPRISE 90 days. Any other value behaves like FREE.',
      values: Object.keys(RETENTION), otherwise: 'FREE',
    },
    { name: 'iso_timestamp_start', required: false, format: 'iso-timestamp', description: 'Only entries strictly after this ISO 8601 instant.' },
    { name: 'iso_timestamp_end', required: false, format: 'iso-timestamp', description: 'Only entries at or before this ISO 8601 instant.' },
  ],
  columns: [
    { name: 'id', type: 'text', description: 'Event id.' },
    { name: 'timestamp', type: 'timestamp', description: 'Event time.' },
    { name: 'event_message', type: 'text', description: 'The log line.' },
    { name: 'metadata', type: 'json', description: 'The stored metadata object.' },
  ],
  plan(params, now) {
    const retained = dateToMicros(subtractSpan(now, RETENTION[params.project_tier as ProjectTier]));
    const start = params.iso_timestamp_start === null ? null : parseIsoMicros(params.iso_timestamp_start!);
    const end = params.iso_timestamp_end === null ? null : parseIsoMicros(params.iso_timestamp_end!);
    // Both lower bounds are exclusive, so the later one is the bound.
    const after = start !== null && start > retained ? start : retained;
    return {
      maxRows: this.maxRows,
      notBefore: after,
      params: {
        project: params.project ?? null,
        after: { timestamp: after },
        until: end === null ? null : { timestamp: end },
        limit: Math.min(LIMIT, this.maxRows),
      },
    };
  },
};
