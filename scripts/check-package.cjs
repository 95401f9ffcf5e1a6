// `npm run check:package`: the package as a user gets it. `npm pack` (whose `prepack` builds) into
// a temporary folder, then
// 1. attw on the tarball: every entry's types resolve under node10, node16 (ESM and CJS), bundler;
// 2. a consumer project of the core entries (log-endpoints, /http, /node) compiles against the
//    tarball with `skipLibCheck: false` and neither optional peer (redis, @clickhouse/client)
//    installed, under moduleResolution node16, nodenext and bundler: the core's types must never
//    need an optional peer;
// 3. the CommonJS build, required as a CommonJS user would, behaves as one package (errors keep
//    their classes across entries, Arrow output works through log-endpoints/http) and loads
//    apache-arrow only when asked to.
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');

const ROOT = resolve(__dirname, '..');
const NODE_MODULES = join(ROOT, 'node_modules');
/** The optional peers (and the packages they are made of): a consumer may have none of them. */
const OPTIONAL_PEERS = new Set(['redis', '@redis', '@clickhouse']);

/** `npm pack` of the repository into `dir`; the tarball's path. */
function pack(dir) {
  // The build's output goes to the terminal too (stdout would mix it into npm's own answer).
  execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const [tarball] = readdirSync(dir).filter((name) => name.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote no tarball');
  return join(dir, tarball);
}

/**
 * A project beside the tarball: the package unpacked as node_modules/log-endpoints, and the
 * repository's installed packages linked in (what an install would bring: dependencies and
 * @types/node), the optional peers left out.
 */
function consumerProject(dir, tarball) {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'log-endpoints'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', join(modules, 'log-endpoints'), '--strip-components=1']);
  for (const name of readdirSync(NODE_MODULES)) {
    if (OPTIONAL_PEERS.has(name) || name === 'log-endpoints' || name.startsWith('.')) continue;
    symlinkSync(join(NODE_MODULES, name), join(modules, name));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const code = `import { createEndpoints, InvalidOptionError, memoryCache, type Endpoints, type EndpointsOptions, type StorageOptions } from 'log-endpoints';
import { createHandler, type HandlerOptions } from 'log-endpoints/http';
import { createNodeListener } from 'log-endpoints/node';

const storage: StorageOptions = { dataDir: './data', clickhouse: { url: 'http://127.0.0.1:8123', database: 'logs' } };
const options: EndpointsOptions = { sources: { edgeLogs: 'logs/*.ndjson' }, storage, cache: memoryCache() };
const http: HandlerOptions = { apiKeys: ['secret'] };

export async function serve(): Promise<Endpoints> {
  const ep = await createEndpoints(options);
  const answer = await ep.query('usage.api-counts', { project: 'abc', interval: 'daily' });
  if (answer.skippedFiles.length > 0) throw new InvalidOptionError('sources', answer.skippedFiles[0]!.message);
  createHandler(ep, http);
  createNodeListener(ep, http);
  return ep;
}
`;
  writeFileSync(join(dir, 'esm.mts'), code);
  writeFileSync(join(dir, 'cjs.cts'), code);
  writeFileSync(join(dir, 'bundler.ts'), code);
}

/** tsc over the consumer with one module resolution; throws with tsc's output when it fails. */
function compile(dir, module, moduleResolution, files) {
  const config = `tsconfig.${moduleResolution}.json`;
  writeFileSync(
    join(dir, config),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, target: 'es2022', lib: ['es2023'], types: ['node'], module, moduleResolution },
      files,
    }),
  );
  try {
    execFileSync(process.execPath, [join(NODE_MODULES, 'typescript', 'bin', 'tsc'), '-p', config], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    throw new Error(`A consumer does not compile under moduleResolution ${moduleResolution}:\n${error.stdout}${error.stderr}`);
  }
  process.stdout.write(`consumer without optional peers, skipLibCheck false, moduleResolution ${moduleResolution}: ok\n`);
}

async function checkCommonJs() {
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

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'le-package-'));
  try {
    const tarball = pack(dir);
    execFileSync(join(NODE_MODULES, '.bin', 'attw'), [tarball], { cwd: ROOT, stdio: 'inherit' });
    const consumer = join(dir, 'consumer');
    consumerProject(consumer, tarball);
    compile(consumer, 'node16', 'node16', ['esm.mts', 'cjs.cts']);
    compile(consumer, 'nodenext', 'nodenext', ['esm.mts', 'cjs.cts']);
    compile(consumer, 'esnext', 'bundler', ['bundler.ts']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await checkCommonJs();
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
});
