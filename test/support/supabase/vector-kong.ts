import { Weighted, type Prng } from '../../../src/fixtures/prng';
import { isoSeconds, utcParts, type Micros } from './instants';
import type { VectorEvent } from './vector-sources';

/**
 * Kong's lines as self-hosted Vector ships them to `cloudflare.logs.prod` (supabase/supabase
 * `docker/volumes/logs/vector.yml`, transforms `kong_logs` and `kong_err`):
 * - an access line in nginx's combined format, after `parse_nginx_log(.event_message, "combined")`:
 *   `timestamp` is the line's own (whole seconds), `metadata.request.{method, path, protocol,
 *   headers{referer, user_agent, cf_connecting_ip}}`, `metadata.response.status_code`; nginx's `-`
 *   (no referer, no agent) is null;
 * - an error line after `parse_nginx_log(.event_message, "error")`: `.severity`, the request split
 *   into method, path and protocol, `metadata.request.host`, `metadata.response.status_code` 200
 *   (the transform's constant), method GET unless the line says otherwise. Lines the transforms
 *   abort on (neither format) never reach the sink, so they are not made here.
 * Both keep `appname` and `project` ("default"; a second stack's Vector may say otherwise).
 */

interface Route {
  method: string;
  path: string;
  statuses: ReadonlyArray<readonly [number, number]>;
}

/** Each route's statuses, weighted once. */
const STATUSES = new Map<Route, Weighted<number>>();

const ROUTES = new Weighted<Route>([
  [
    {
      method: 'GET',
      path: '/rest/v1/todos?select=*',
      statuses: [
        [200, 95],
        [401, 3],
        [500, 1],
        [503, 1],
      ],
    },
    30,
  ],
  [
    {
      method: 'GET',
      path: '/rest/v1/todos?select=*&id=eq.7',
      statuses: [
        [200, 9],
        [404, 1],
      ],
    },
    6,
  ],
  [
    {
      method: 'POST',
      path: '/rest/v1/todos',
      statuses: [
        [201, 9],
        [400, 1],
        [409, 1],
      ],
    },
    6,
  ],
  [
    {
      method: 'PATCH',
      path: '/rest/v1/todos?id=eq.3',
      statuses: [
        [204, 9],
        [400, 1],
      ],
    },
    3,
  ],
  [{ method: 'DELETE', path: '/rest/v1/todos?id=eq.3', statuses: [[204, 1]] }, 2],
  [{ method: 'GET', path: '/rest/v1/profiles?select=*&username=eq.zo%C3%AB', statuses: [[200, 1]] }, 2],
  [
    {
      method: 'GET',
      path: '/rest/v1/todos?select=*&title=eq.\\x22quoted\\x22',
      statuses: [
        [200, 1],
        [400, 1],
      ],
    },
    1,
  ],
  [
    {
      method: 'POST',
      path: '/rest/v1/rpc/get_stats',
      statuses: [
        [200, 8],
        [404, 1],
        [500, 1],
      ],
    },
    3,
  ],
  [{ method: 'GET', path: '/rest/v1/', statuses: [[200, 1]] }, 1],
  [{ method: 'OPTIONS', path: '/rest/v1/todos?select=*', statuses: [[200, 1]] }, 3],
  [
    {
      method: 'POST',
      path: '/graphql/v1',
      statuses: [
        [200, 9],
        [400, 1],
      ],
    },
    2,
  ],
  [
    {
      method: 'POST',
      path: '/auth/v1/token?grant_type=password',
      statuses: [
        [200, 7],
        [400, 3],
      ],
    },
    6,
  ],
  [
    {
      method: 'POST',
      path: '/auth/v1/token?grant_type=refresh_token',
      statuses: [
        [200, 9],
        [400, 1],
      ],
    },
    4,
  ],
  [
    {
      method: 'POST',
      path: '/auth/v1/signup',
      statuses: [
        [200, 6],
        [422, 3],
        [429, 1],
      ],
    },
    2,
  ],
  [
    {
      method: 'GET',
      path: '/auth/v1/user',
      statuses: [
        [200, 8],
        [401, 2],
        [403, 1],
      ],
    },
    5,
  ],
  [{ method: 'POST', path: '/auth/v1/logout', statuses: [[204, 1]] }, 1],
  [{ method: 'GET', path: '/auth/v1/settings', statuses: [[200, 1]] }, 1],
  [{ method: 'GET', path: '/auth/v1/authorize?provider=github', statuses: [[302, 1]] }, 1],
  [
    {
      method: 'GET',
      path: '/auth/v1/admin/users?page=1',
      statuses: [
        [200, 9],
        [500, 1],
      ],
    },
    1,
  ],
  [{ method: 'PUT', path: '/auth/v1/user', statuses: [[200, 1]] }, 1],
  [
    {
      method: 'GET',
      path: '/storage/v1/object/public/avatars/a.png',
      statuses: [
        [200, 8],
        [404, 2],
      ],
    },
    5,
  ],
  [{ method: 'GET', path: '/storage/v1/object/public/b%C3%BCcher/%C3%BC.png', statuses: [[200, 1]] }, 1],
  [
    {
      method: 'POST',
      path: '/storage/v1/object/avatars/a.png',
      statuses: [
        [200, 8],
        [400, 1],
        [413, 1],
      ],
    },
    2,
  ],
  [
    {
      method: 'GET',
      path: '/storage/v1/object/sign/docs/report.pdf?token=eyJhbGciOi',
      statuses: [
        [200, 9],
        [400, 1],
      ],
    },
    2,
  ],
  [{ method: 'GET', path: '/storage/v1/render/image/public/avatars/a.png?width=200', statuses: [[200, 1]] }, 1],
  [{ method: 'GET', path: '/storage/v1/bucket', statuses: [[200, 1]] }, 1],
  [{ method: 'DELETE', path: '/storage/v1/object/avatars', statuses: [[200, 1]] }, 1],
  [{ method: 'GET', path: '/realtime/v1/websocket?apikey=eyJhbGciOi&vsn=1.0.0', statuses: [[101, 1]] }, 3],
  [{ method: 'GET', path: '/realtime/v1/api/tenants/realtime-dev/health', statuses: [[200, 1]] }, 1],
  [
    {
      method: 'POST',
      path: '/functions/v1/hello',
      statuses: [
        [200, 8],
        [500, 1],
        [546, 1],
      ],
    },
    3,
  ],
  [{ method: 'OPTIONS', path: '/functions/v1/hello', statuses: [[200, 1]] }, 1],
  [{ method: 'GET', path: '/', statuses: [[404, 1]] }, 1],
  [{ method: 'GET', path: '/.env', statuses: [[404, 1]] }, 1],
  [{ method: 'HEAD', path: '/rest/v1/todos?select=*', statuses: [[200, 1]] }, 1],
]);

const CLIENTS = ['172.18.0.1', '172.18.0.1', '172.18.0.9', '10.0.0.23', '2001:db8::7'];
const AGENTS = ['supabase-js/2.45.0', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36', 'node', 'Deno/1.45.2', 'curl/8.5.0', null];
const REFERERS = ['http://localhost:3000/', 'http://localhost:3000/dashboard', null, null];

/** A Kong line at `micros` (whole seconds): mostly access lines, some error lines. */
export function kongEvent(prng: Prng, micros: Micros): VectorEvent {
  // A second stack's Vector shipping to the same analytics service: its `.project` is its own.
  const project = prng.chance(0.005) ? 'staging' : 'default';
  return prng.chance(0.04) ? kongErrorLine(prng, micros, project) : kongAccessLine(prng, micros, project);
}

function kongAccessLine(prng: Prng, micros: Micros, project: string): VectorEvent {
  const route = ROUTES.pick(prng);
  if (!STATUSES.has(route)) STATUSES.set(route, new Weighted(route.statuses));
  const status = STATUSES.get(route)!.pick(prng);
  const client = prng.pick(CLIENTS);
  const agent = prng.pick(AGENTS);
  const referer = prng.pick(REFERERS);
  // Sometimes 404 bytes: a 200 line that a search for ' 404 ' matches all the same.
  const bytes = prng.chance(0.03) ? 404 : [101, 204, 302].includes(status) ? 0 : 17 + prng.int(4000);
  const t = utcParts(micros);
  const line = `${client} - - [${t.day}/${t.monthName}/${t.year}:${t.time} +0000] "${route.method} ${route.path} HTTP/1.1" ${status} ${bytes} "${referer ?? '-'}" "${agent ?? '-'}"`;
  return {
    appname: 'supabase-kong',
    event_message: line,
    metadata: {
      request: { headers: { cf_connecting_ip: client, referer, user_agent: agent }, method: route.method, path: route.path, protocol: 'HTTP/1.1' },
      response: { status_code: status },
    },
    project,
    timestamp: isoSeconds(micros),
  };
}

const ERRORS = new Weighted<readonly [string, string]>([
  [['error', 'connect() failed (111: Connection refused) while connecting to upstream'], 5],
  [['error', 'upstream timed out (110: Operation timed out) while reading response header from upstream'], 2],
  [['warn', 'an upstream response is buffered to a temporary file /usr/local/kong/proxy_temp/3/00/0000000003 while reading upstream'], 2],
  [['crit', 'SSL_do_handshake() failed (SSL: error:0A00010B:SSL routines::wrong version number) while SSL handshaking to upstream'], 1],
]);

function kongErrorLine(prng: Prng, micros: Micros, project: string): VectorEvent {
  const [severity, message] = ERRORS.pick(prng);
  const route = ROUTES.pick(prng);
  const client = prng.pick(CLIENTS);
  const t = utcParts(micros);
  const withHost = prng.chance(0.9);
  const upstream = `http://172.18.0.${4 + prng.int(8)}:${prng.pick(['3000', '5000', '9999', '4000'])}${route.path}`;
  const line = `${t.year}/${t.month}/${t.day} ${t.time} [${severity}] 1#0: *${1 + prng.int(90000)} ${message}, client: ${client}, server: kong, request: "${route.method} ${route.path} HTTP/1.1", upstream: "${upstream}"${withHost ? ', host: "localhost:8000"' : ''}`;
  return {
    appname: 'supabase-kong',
    event_message: line,
    metadata: {
      request: { headers: { cf_connecting_ip: client }, host: withHost ? 'localhost:8000' : null, method: route.method, path: route.path, protocol: 'HTTP/1.1' },
      response: { status_code: 200 },
    },
    project,
    severity,
    timestamp: isoSeconds(micros),
  };
}
