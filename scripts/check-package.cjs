// `npm run check:package` runs this after `tsup` and `attw --pack`: the CommonJS build, required
// as a CommonJS user would, behaves as one package (errors keep their classes across entries,
// Arrow output works through log-endpoints/http) and loads apache-arrow only when asked to.
const assert = require('node:assert/strict');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

async function main() {
  const { createEndpoints, LogEndpointsError } = require('../dist/index.cjs');
  const { createHandler } = require('../dist/http.cjs');
  require('../dist/node.cjs');
  require('../dist/redis.cjs');
  const arrowLoaded = () => Object.keys(require.cache).some((file) => file.includes(`${join('node_modules', 'apache-arrow')}`));
  assert.equal(arrowLoaded(), false, 'requiring the package must not load apache-arrow');

  const dir = mkdtempSync(join(tmpdir(), 'le-check-'));
  const ep = await createEndpoints({ sources: { edgeLogs: join(dir, '*.ndjson') } });
  try {
    const handler = createHandler(ep, { auth: false });
    const bad = await handler(new Request('http://localhost/api/endpoints/usage.api-counts?project=a&interval=weekly'));
    assert.equal(bad.status, 400, 'a library error must keep its status through log-endpoints/http');
    assert.equal((await bad.json()).error.code, 'invalid_parameter');
    const arrow = await handler(new Request('http://localhost/api/endpoints/usage.api-counts?project=a&interval=daily', { headers: { Accept: 'application/vnd.apache.arrow.stream' } }));
    assert.equal(arrow.status, 200, 'Arrow output through log-endpoints/http');
    assert.equal(arrow.headers.get('content-type'), 'application/vnd.apache.arrow.stream');
    await assert.rejects(ep.query('no.such', {}), (e) => e instanceof LogEndpointsError && e.code === 'not_found');
  } finally {
    await ep.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // A large ingest body is parsed on the bundle's own parser thread (dist/ingest-parser.cjs).
  const dataDir = mkdtempSync(join(tmpdir(), 'le-check-data-'));
  const managed = await createEndpoints({ storage: { dataDir } });
  try {
    const events = Array.from({ length: 1000 }, (_, i) => ({ id: `e${i}`, message: 'x'.repeat(100), project: 'check' }));
    const body = JSON.stringify(events);
    assert.ok(body.length > 64 * 1024, 'the body must be large enough for the parser thread');
    const handler = createHandler(managed, { auth: false });
    const ingested = await handler(new Request('http://localhost/api/logs?source_name=cloudflare.logs.prod', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }));
    assert.equal(ingested.status, 200, `a large body through the parser thread: ${await ingested.text()}`);
    assert.equal((await managed.logsAll({ project: 'check', project_tier: 'FREE' })).length, 100);
  } finally {
    await managed.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.stdout.write('CommonJS build: one package, Arrow on demand, large bodies parsed off the main thread: ok\n');
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
});
