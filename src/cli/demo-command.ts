import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createEndpoints } from '../api/create-endpoints';
import { logsAll } from '../definitions/logs-all';
import { writeDemoData } from './demo-data-command';
import { helpText } from './help';
import type { CliIO } from './io';
import { apiKeysOf, clockOf, integerOf, parseOptions } from './parse-options';
import { runServer } from './run-server';
import { systemNow } from '../time/clock';

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  out: { type: 'string' },
  events: { type: 'string' },
  'api-key': { type: 'string', multiple: true },
  now: { type: 'string' },
  'no-dashboard': { type: 'boolean' },
} as const;

/** `log-endpoints demo` (`npm start`): demo data relative to now, served, with curl commands to try. */
export async function demoCommand(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseOptions('demo', argv, OPTIONS);
  if (values.help) {
    io.stdout.write(helpText('demo')!);
    return 0;
  }
  const port = integerOf('demo', 'port', values.port, 4000, 0, 65535);
  const host = values.host ?? '127.0.0.1';
  const events = integerOf('demo', 'events', values.events, 20_000, 1, 10_000_000);
  const key = apiKeysOf(values['api-key'], io.env)[0] ?? `demo-${randomBytes(12).toString('hex')}`;

  const clock = clockOf('demo', values.now);
  const out = values.out ?? '.demo-data';
  const logs = await writeDemoData(io, { out, events, now: clock?.() ?? systemNow() });
  // Managed storage beside the generated files: what the ingest curl line sends to is kept here.
  const storage = { dataDir: join(out, 'managed') };
  const ep = await createEndpoints({ sources: { edgeLogs: logs.edgeLogs, functionEdgeLogs: logs.functionEdgeLogs }, storage, now: clock });
  const project = logs.projects[0]!;
  const dashboard = !values['no-dashboard'];
  return runServer(ep, { host, port, apiKeys: [key], dashboard }, io, ({ url }) => {
    const curl = (path: string) => `curl -s -H 'X-API-KEY: ${key}' '${url}${path}'`;
    const event = JSON.stringify({
      message: 'GET | 200 | 127.0.0.1 | https://curl-demo.supabase.co/rest/v1/hello',
      project: 'curl-demo',
      metadata: { request: { method: 'GET', path: '/rest/v1/hello', url: 'https://curl-demo.supabase.co/rest/v1/hello' } },
    });
    const ingest = `curl -s -H 'X-API-KEY: ${key}' -H 'Content-Type: application/json' -d '${event}' '${url}/api/logs?source_name=cloudflare.logs.prod'`;
    io.stdout.write(
      [
        // The page is what most people want: its URL comes first.
        ...(dashboard ? [`Dashboard: ${url}/  (API key: ${key})`] : []),
        '',
        `log-endpoints demo: ${events.toLocaleString('en-US')} gateway events of ${logs.projects.length} projects, serving on ${url}`,
        `API key: ${key}`,
        '',
        'Try:',
        `  ${curl(`/api/endpoints/usage.api-counts?project=${project}&interval=daily`)}`,
        `  ${curl(`/api/endpoints/functions.invocation-stats?project=${project}&interval=1day`)}`,
        `  ${curl(`/api/endpoints/query/${logsAll.id}?project=${project}&project_tier=PRO`)}`,
        '',
        `Send an event (kept in ${storage.dataDir}), then see it in logs.all:`,
        `  ${ingest} && echo && ${curl('/api/endpoints/logs.all?project=curl-demo&project_tier=FREE')}`,
        '',
        `Also: ${url}/api/endpoints (definitions), ${url}/api/openapi.json, ${url}/health. Ctrl+C stops.`,
        '',
      ].join('\n'),
    );
  });
}
