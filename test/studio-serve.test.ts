import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, waitForStdout } from './support/cli';
import { tempDir } from './support/log-files';
import { studioHeaders, studioRequests, studioUrl } from './support/supabase/studio-requests';
import { replay, shipLikeVector, vectorPost } from './support/supabase/studio-replay';
import { generateVectorEvents } from './support/supabase/vector-events';

/**
 * `log-endpoints serve --supabase` as the `analytics` service of a self-hosted stack: the two tokens
 * of Supabase's `.env` and nothing else but a data dir and a port (and `--now`, so the windows are
 * the test's, never the wall clock's). Vector ships its feeds with the public token, Studio asks
 * with the private one, and a few of Studio's requests answer as the reference says
 * (test/studio-replay.test.ts replays them all in-process).
 */

const PUBLIC = 'serve-public-access-token';
const PRIVATE = 'serve-private-access-token';
const tmp = tempDir('le-studio-serve-');
const NOW = new Date('2026-11-21T12:00:00Z');
const { events } = generateVectorEvents({ now: NOW, seed: 3, counts: { edge_logs: 400, postgres_logs: 300 } });
const ASKED = [
  /^.*: list, last hour$/,
  /^API Gateway: list, last hour, product database$/,
  /^Auth: list, last hour, severity warning$/,
  /^(API Gateway|Auth|Cron): chart by minute, last hour$/,
  /: new-logs count, since page load$/,
  /^Explorer: template (Top Paths|Storage Egress Requests|Auth Audit Logs), last hour$/,
];
const requests = studioRequests(NOW).filter((r) => ASKED.some((pattern) => pattern.test(r.name)));
let server: ReturnType<typeof spawnCli>;
let url: string;

beforeAll(async () => {
  server = spawnCli(['serve', '--supabase', '--data-dir', tmp.path('data'), '--port', '0', '--now', NOW.toISOString()], {
    LOGFLARE_PUBLIC_ACCESS_TOKEN: PUBLIC,
    LOGFLARE_PRIVATE_ACCESS_TOKEN: PRIVATE,
  });
  url = (await waitForStdout(server, /Listening on (http:\/\/\S+) /))[1]!;
  await shipLikeVector(url, PUBLIC, events);
});

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
  tmp.cleanup();
});

describe('serve --supabase with the two tokens of a self-hosted stack', () => {
  it(`answers ${requests.length} of Studio's requests (lists, filters, charts, counts, templates, a refusal) as the reference`, async () => {
    expect(requests.length).toBeGreaterThanOrEqual(20);
    const problems: string[] = [];
    for (const request of requests) {
      const { problem } = await replay(url, PRIVATE, request, events);
      if (problem) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });

  it('takes events with the public token only where events go: Studio needs the private one to read them', async () => {
    const list = requests.find((r) => r.name === 'API Gateway: list, last hour')!;
    const asPublic = await fetch(studioUrl(url, list), { headers: studioHeaders(PUBLIC) });
    expect(asPublic.status).toBe(401);
    const anonymous = await fetch(studioUrl(url, list), { headers: { Accept: 'application/json' } });
    expect(anonymous.status).toBe(401);
    await expect(vectorPost(url, 'not-a-token', 'cloudflare.logs.prod', [events.edge_logs[0]!])).rejects.toThrow(/answered 401/);
  });
});
