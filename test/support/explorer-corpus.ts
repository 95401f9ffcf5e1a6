import { answerProblem } from './supabase/compare-answer';
import { DAY, isoMillis, microsOf } from './supabase/instants';
import { tableRows, timestampMicros } from './supabase/reference-rows';
import { answerOf, type Answer } from './supabase/studio-replay';
import { studioHeaders } from './supabase/studio-requests';
import { generateVectorEvents } from './supabase/vector-events';
import { LOG_TABLES, type VectorEvents } from './supabase/vector-sources';
import { EXPLORER_ORACLES, type Tables } from './explorer-oracles';
import type { ExplorerExpectation, ExplorerQuery } from './explorer-queries';

/**
 * What the Logs Explorer corpus runs on (test/explorer-corpus.test.ts and its ClickHouse twin): a
 * fixed clock, Vector's nine feeds over the last day before it, the request Studio sends for a
 * query typed in the Explorer, and the verdict on an answer.
 */

/** The clock of the corpus's instance. */
export const EXPLORER_NOW = new Date('2026-11-21T12:00:00Z');

/** The Explorer's range, "last 24 hours": what Studio sends as `iso_timestamp_start` and `iso_timestamp_end`. */
export const EXPLORER_RANGE = { iso_timestamp_start: isoMillis(microsOf(EXPLORER_NOW) - DAY), iso_timestamp_end: isoMillis(microsOf(EXPLORER_NOW)) };

/** Events per feed: enough for errors, redirects and a few groups of each kind, small enough to read. */
const COUNTS = {
  edge_logs: 300,
  auth_logs: 200,
  postgrest_logs: 40,
  realtime_logs: 40,
  storage_logs: 40,
  postgres_logs: 200,
  function_edge_logs: 120,
  function_logs: 120,
  pgbouncer_logs: 20,
};

/**
 * The events shipped (the generator's, within the range: after its start, at or before its end,
 * so no retention rule decides what a query sees) and the rows each table holds of them.
 */
export function explorerDataset(): { events: VectorEvents; tables: Tables } {
  const { events: all } = generateVectorEvents({ now: EXPLORER_NOW, counts: COUNTS });
  const start = microsOf(EXPLORER_NOW) - DAY;
  const end = microsOf(EXPLORER_NOW);
  const events = Object.fromEntries(
    LOG_TABLES.map(
      (t) =>
        [
          t,
          all[t].filter((e) => {
            const at = timestampMicros(e.timestamp as string);
            return at > start && at <= end;
          }),
        ] as const,
    ),
  ) as VectorEvents;
  const tables = Object.fromEntries(LOG_TABLES.map((t) => [t, tableRows(events, t, EXPLORER_RANGE)])) as Tables;
  return { events, tables };
}

/**
 * A query run from the Logs Explorer, as Studio's proxy sends it (`useLogsQuery`): `GET
 * /api/endpoints/query/logs.all?project=default&sql=...&iso_timestamp_start=...&iso_timestamp_end=...`
 * with the private access token.
 */
export async function askExplorer(url: string, privateToken: string, sql: string): Promise<Answer> {
  const target = new URL(`${url}/api/endpoints/query/logs.all`);
  target.searchParams.set('project', 'default');
  target.searchParams.set('sql', sql);
  target.searchParams.set('iso_timestamp_start', EXPLORER_RANGE.iso_timestamp_start);
  target.searchParams.set('iso_timestamp_end', EXPLORER_RANGE.iso_timestamp_end);
  return answerOf(await fetch(target, { headers: studioHeaders(privateToken) }));
}

/**
 * A query of the request's clock and what it must answer with the corpus's injected clock
 * (EXPLORER_NOW): `CURRENT_TIMESTAMP()` is the endpoint's bound `$now`, never the engine's clock,
 * so the last hour's count is the events within an hour before EXPLORER_NOW.
 */
export function clockQuery(events: VectorEvents): { sql: string; rows: Array<Record<string, unknown>> } {
  const now = microsOf(EXPLORER_NOW);
  const lastHour = events.edge_logs.filter((e) => timestampMicros(e.timestamp as string) > now - 3_600_000_000).length;
  return {
    sql: 'select current_timestamp() as now, cast(current_datetime() as string) as text, count(*) as n from edge_logs where timestamp > timestamp_sub(current_timestamp(), interval 1 hour)',
    rows: [{ now, text: '2026-11-21 12:00:00+00', n: lastHour }],
  };
}

/**
 * What is wrong with `answer` to `query` (null: nothing), when the engine is expected to do
 * `expectation` with it: answer the oracle's rows; refuse it as BigQuery does; or refuse it for
 * now, cleanly, naming what it refuses, with the oracle's rows the day it answers.
 */
export function explorerProblem(query: ExplorerQuery, answer: Answer, tables: Tables, expectation: ExplorerExpectation): string | null {
  const oracle = EXPLORER_ORACLES[query.id];
  if (expectation === 'answers' || (expectation === 'not-yet' && answer.status === 200)) {
    if (!oracle) return `no oracle for ${query.id}`;
    const problem = answerProblem(oracle(tables), answer.status, answer.body);
    return problem && (expectation === 'not-yet' ? `answers now, differently from the oracle: ${problem}` : problem);
  }
  const error = (answer.body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (answer.status !== 400 || error?.code !== 'invalid_sql') return `expected 400 invalid_sql, got ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`;
  const message = String(error.message);
  return message.includes(query.refusal ?? '\u0000') ? null : `the refusal does not name ${JSON.stringify(query.refusal)}: ${message}`;
}
