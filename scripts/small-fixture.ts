import type { GenerateLogsOptions } from '../src/fixtures/generate-logs';

/** How the committed fixtures/small/ were generated; tests using them take `now` from here. */
export const SMALL_FIXTURE = {
  now: new Date('2026-11-21T12:00:00Z'),
  seed: 1,
  days: 7,
  projects: 3,
  edgeEvents: 600,
  functionEvents: 400,
  brokenLineRate: 0.005,
  // Window edges: a few events after `now`.
  eventsAfterNow: true,
  formats: ['ndjson', 'parquet'],
} as const satisfies Omit<GenerateLogsOptions, 'outDir' | 'formats'> & { formats: ReadonlyArray<'ndjson' | 'parquet'> };
