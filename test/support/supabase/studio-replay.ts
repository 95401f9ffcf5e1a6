import { answerProblem } from './compare-answer';
import { expectedAnswer, type Expected } from './reference';
import { aroundRow, olderPageRequest, singleLogRequest, studioHeaders, studioUrl, throughStudioProxy, type StudioRequest } from './studio-requests';
import type { StudioTable } from './studio-sql';
import { sourceNameOf, VECTOR_SOURCES, type LogTable, type VectorEvent, type VectorEvents } from './vector-sources';

/**
 * The two clients of a self-hosted Supabase analytics server, played against a real one: Vector's
 * http sinks shipping the feeds, and Studio's server-side proxy asking `logs.all`; and the check
 * of each answer against the reference.
 */

/** Events per request of Vector's http sink here (its batches are bounded by bytes and a 1 s timeout). */
export const VECTOR_BATCH = 250;

/**
 * What Vector's `http` sink with `codec: json` sends (supabase/supabase `docker/volumes/logs/vector.yml`):
 * a JSON array of events, `POST <url>/api/logs?source_name=<name>` with the name's own spelling,
 * `x-api-key` the public access token, no compression. Throws unless the answer is 200.
 */
export async function vectorPost(url: string, ingestKey: string, sourceName: string, events: readonly VectorEvent[]): Promise<void> {
  const response = await fetch(`${url}/api/logs?source_name=${sourceName}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Vector/0.34.0 (x86_64-unknown-linux-gnu)', 'x-api-key': ingestKey },
    body: JSON.stringify(events),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`Vector's batch to ${sourceName} answered ${response.status}: ${text.slice(0, 500)}`);
}

/** Ships the part `pick` chooses of every feed (default all), batch after batch; returns how many events. */
export async function shipLikeVector(url: string, ingestKey: string, events: VectorEvents, pick: (events: readonly VectorEvent[]) => readonly VectorEvent[] = (all) => all): Promise<number> {
  let shipped = 0;
  for (const { table } of VECTOR_SOURCES) {
    const part = pick(events[table]);
    for (let i = 0; i < part.length; i += VECTOR_BATCH) await vectorPost(url, ingestKey, sourceNameOf(table), part.slice(i, i + VECTOR_BATCH));
    shipped += part.length;
  }
  return shipped;
}

/** An answer as the server gave it. */
export interface Answer {
  status: number;
  body: unknown;
}

/** A request sent as Studio's proxy sends it (`studioUrl`, `studioHeaders`): GET, everything in the query string. */
export async function askLikeStudio(url: string, privateToken: string, request: StudioRequest): Promise<Answer> {
  return answerOf(await fetch(studioUrl(url, request), { headers: studioHeaders(privateToken) }));
}

/** A response as an answer: its status, and its body parsed (kept as text when it is not JSON, so the problem shows it). */
export async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text itself.
  }
  return { status: response.status, body };
}

/** A request, its answer, and what differs from the reference (null: nothing). */
export interface Replayed {
  request: StudioRequest;
  answer: Answer;
  expected: Expected;
  problem: string | null;
}

/**
 * Asks one request and compares. A refusal is also checked as Studio's user sees it: the proxy's
 * 500, whose message is ours.
 */
export async function replay(url: string, privateToken: string, request: StudioRequest, events: VectorEvents): Promise<Replayed> {
  const answer = await askLikeStudio(url, privateToken, request);
  const expected = expectedAnswer(request, events);
  let problem = answerProblem(expected, answer.status, answer.body);
  if (problem === null && expected.status === 400) {
    const shown = throughStudioProxy(answer.status, answer.body);
    const message = (shown.body as { error: { message: string } }).error.message;
    if (shown.status !== 500 || message !== (answer.body as { error: { message: string } }).error.message) problem = `Studio shows ${JSON.stringify(shown)}`;
  }
  return { request, answer, expected, problem: problem && `${request.name}: ${problem}` };
}

/** The table a page's single log is read from (`LOGS_TABLES` of its query type): the Cron page's is Postgres's. */
function singleTableOf(page: StudioTable): LogTable {
  return page === 'pg_cron_logs' ? 'postgres_logs' : page;
}

/**
 * What Studio asks next from the answers it got: "Load older" after every list that returned rows
 * (`olderPageRequest`), and, for each page's default list, the first row opened by its id with no
 * range and with a minute around it (`useSingleLog`).
 */
export function followUpRequests(done: readonly Replayed[]): StudioRequest[] {
  const next: StudioRequest[] = [];
  for (const { request, answer } of done) {
    if (request.spec.kind !== 'list' || answer.status !== 200) continue;
    const rows = (answer.body as { result: Array<{ id: string; timestamp: number; event_message: string | null }> }).result;
    if (!rows.length) continue;
    next.push(olderPageRequest(request, rows.at(-1)!.timestamp));
    if (!/: list, last hour$/.test(request.name)) continue;
    const first = rows[0]!;
    const table = singleTableOf(request.spec.page);
    const sameAs = { micros: first.timestamp, event_message: first.event_message };
    next.push({ ...singleLogRequest(table, first.id, { label: 'no range', start: '', end: '' }, sameAs), name: `${request.name}: first row opened, no range` });
    next.push({ ...singleLogRequest(table, first.id, aroundRow(first.timestamp), sameAs), name: `${request.name}: first row opened, a minute around it` });
  }
  return next;
}
