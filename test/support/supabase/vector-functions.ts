import { Weighted, uuid, type Prng } from '../../../src/fixtures/prng';
import { isoNanos } from './instants';
import type { At } from './vector-services';
import type { VectorEvent } from './vector-sources';

/**
 * Edge-function lines as self-hosted Vector ships them (docs/supabase.md, "Sources"; supabase/supabase
 * `docker/volumes/logs/vector.yml`, transform `functions_logs`: `.metadata.project_ref = del(.project)`,
 * so no top-level `project`):
 * - `deno-relay-logs` (function_edge_logs): the runtime's own lines (`metadata.project_ref` only) and
 *   invocations with `metadata.{function_id, execution_time_ms, deployment_id, version,
 *   request{method, pathname}, response{status_code}}`, some without `response` (a timed-out call);
 * - `deno-subhosting-events` (function_logs): what a function writes, with
 *   `metadata.{function_id, execution_id, event_type, level}`.
 */

const FUNCTIONS = ['hello', 'stripe-webhook', 'resize-image'];

const RUNTIME_LINES = [
  'serving the request with /home/deno/functions/hello',
  'booted (time: 24ms)',
  'main function started',
  'Error: failed to bootstrap runtime: could not find an appropriate entrypoint',
  'worker timeout: 150000ms',
];

/** A line of `deno-relay-logs` at `at`. */
export function functionEdgeEvent(prng: Prng, at: At): VectorEvent {
  const timestamp = isoNanos(at.micros, at.nanos);
  if (prng.chance(0.25)) {
    return { appname: 'supabase-edge-functions', event_message: prng.pick(RUNTIME_LINES), metadata: { project_ref: 'default' }, timestamp };
  }
  const name = prng.pick(FUNCTIONS);
  const method = name === 'hello' && prng.chance(0.2) ? 'OPTIONS' : 'POST';
  const status = new Weighted<number>([
    [200, 80],
    [201, 4],
    [400, 5],
    [401, 3],
    [404, 2],
    [500, 4],
    [546, 2],
  ]).pick(prng);
  // A call that timed out has no response (nor an execution time): the missing nested record.
  const timedOut = prng.chance(0.05);
  const executionMs = timedOut ? undefined : Math.round(Math.exp(3 + prng.normal()));
  // Keys in byte order, as Vector writes them.
  const metadata = {
    deployment_id: `default_${name}_3`,
    ...(timedOut ? {} : { execution_time_ms: executionMs }),
    function_id: name,
    project_ref: 'default',
    request: { method, pathname: `/${name}` },
    ...(timedOut ? {} : { response: { status_code: status } }),
    version: '3',
  };
  const shown = timedOut ? 504 : status;
  return { appname: 'supabase-edge-functions', event_message: `${method} | ${shown} | http://localhost:8000/functions/v1/${name}`, metadata, timestamp };
}

const OUTPUT = new Weighted<readonly [string, string, string]>([
  [['Log', 'log', 'Hello from Functions! 👋'], 10],
  [['Log', 'info', 'processing event evt_1Q2w3E4r5T6y'], 6],
  [['Log', 'debug', 'payload: {"name":"Zoë"}'], 3],
  [['Log', 'warn', 'Deprecated API used: Deno.run'], 2],
  [['Log', 'error', 'Error: Stripe signature verification failed'], 2],
  [['UncaughtException', 'error', "TypeError: Cannot read properties of undefined (reading 'id')\n    at handler (file:///home/deno/functions/stripe-webhook/index.ts:12:20)"], 1],
  [['Boot', 'log', 'booted (time: 31ms)'], 3],
  [['Shutdown', 'log', 'shutdown (reason: EarlyDrop)'], 2],
]);

/** A line of `deno-subhosting-events` at `at`. */
export function functionLogEvent(prng: Prng, at: At): VectorEvent {
  const [event_type, level, message] = OUTPUT.pick(prng);
  const execution_id = uuid(prng);
  const function_id = prng.pick(FUNCTIONS);
  // A Shutdown now and then carries no level: the severity filters and the chart see NULL.
  const leveled = !(event_type === 'Shutdown' && prng.chance(0.5));
  const metadata = { event_type, execution_id, function_id, ...(leveled ? { level } : {}), project_ref: 'default' };
  return { appname: 'supabase-edge-functions', event_message: message, metadata, timestamp: isoNanos(at.micros, at.nanos) };
}

/** The function ids the generator uses (Studio's function pages filter on one). */
export const FUNCTION_IDS: readonly string[] = FUNCTIONS;
