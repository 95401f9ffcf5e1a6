/**
 * Regenerates the small committed fixtures under fixtures/ (run: `npm run fixtures`).
 * Deterministic: the same generator version gives byte-identical NDJSON, so a diff after
 * running it means the generator changed.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateLogs } from '../src/fixtures/generate-logs';
import { SMALL_FIXTURE } from './small-fixture';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  const outDir = join(root, 'fixtures', 'small');
  await rm(outDir, { recursive: true, force: true });
  const logs = await generateLogs({ ...SMALL_FIXTURE, formats: [...SMALL_FIXTURE.formats], outDir });
  const files = [...logs.edgeLogs, ...logs.functionEdgeLogs];
  const lines: string[] = [];
  let bytes = 0;
  for (const file of files) {
    const size = (await stat(file)).size;
    bytes += size;
    const rows = file.endsWith('.ndjson') ? (await readFile(file, 'utf8')).split('\n').filter(Boolean).length : null;
    lines.push(`| \`${relative(join(root, 'fixtures'), file)}\` | ${size.toLocaleString('en-US')} | ${rows === null ? '' : rows} |`);
  }
  await writeFile(join(root, 'fixtures', 'README.md'), readme(logs.projects, logs.functionIds, lines));
  console.log(`fixtures/small: ${files.length} files, ${bytes.toLocaleString('en-US')} bytes`);
}

function readme(projects: string[], functionIds: Record<string, string[]>, fileRows: string[]): string {
  const o = SMALL_FIXTURE;
  return `# Fixtures

Small generated logs for tests, examples and the demo. **Do not edit by hand**: they are written by
\`npm run fixtures\` (\`scripts/generate-fixtures.ts\`), which calls \`generateLogs\` from
\`src/fixtures/generate-logs.ts\` with:

| option | value |
|---|---|
| reference instant (\`now\`) | \`${o.now.toISOString()}\` |
| seed | ${o.seed} |
| days | ${o.days} (events from \`now - ${o.days} days\` to \`now\`, a few up to 15 minutes after \`now\`) |
| projects | ${o.projects} |
| edge events | ${o.edgeEvents} |
| function events | ${o.functionEvents} |
| broken-line rate | ${o.brokenLineRate} (NDJSON only; broken lines come on top of the events) |

Query them with the clock set to the reference instant, so the windows hold data:

\`\`\`ts
const ep = await createEndpoints({
  sources: { edgeLogs: 'fixtures/small/edge/*.ndjson', functionEdgeLogs: 'fixtures/small/functions/*.ndjson' },
  now: () => new Date('${o.now.toISOString()}'),
});
\`\`\`

The \`.parquet\` files hold the same events as the \`.ndjson\` files beside them (without the broken
lines), in the engine's Parquet layout; point a source at one format or the other, not both.

| file | bytes | lines |
|---|---|---|
${fileRows.join('\n')}

Projects (most traffic first) and their edge-function ids:

${projects.map((p) => `- \`${p}\`: ${functionIds[p]!.map((f) => `\`${f}\``).join(', ')}`).join('\n')}

What is in them (see \`src/fixtures/\`): edge requests to \`/rest/v1\`, \`/auth/v1\`, \`/storage/v1\`,
\`/realtime/v1\`, paths touching several of these (\`/rest/v1/auth_audit\`) or almost
(\`/rest/v1/rpc/storage_auth\`), and others (\`/functions/v1/...\`, \`/graphql/v1\`); a realistic mix
of status codes; timestamps as ISO strings (mostly six fractional digits and \`Z\`, some with a
numeric offset, some with fewer digits) and as integer microseconds; events sharing an instant;
events on exact second/minute/hour/day boundaries or one microsecond beside them; events without
\`metadata.request\`, without a status code or an execution time; extra fields; broken lines.
`;
}

await main();
