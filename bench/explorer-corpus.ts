/**
 * The Logs Explorer corpus (test/support/explorer-queries.ts) on current ClickHouse:
 *
 *   npx tsx bench/explorer-corpus.ts
 *
 * The tests never reach the network and chdb is never a dependency, so this runs here, with npm
 * `chdb` (ClickHouse in process) installed on demand into `.bench-data/peers` as the bench's
 * peers are. chdb is handed to the library as its ClickHouse client (`client` of the ClickHouse
 * target): `serve --supabase` on the ClickHouse engine runs unchanged over it, as the integration
 * test runs it over ClickHouse 18.16 (test/integration/explorer-corpus-clickhouse.test.ts). The
 * loader creates the tables, managed storage ships the events Vector's way into them (RowBinary),
 * and each query of the corpus goes over HTTP as Studio sends it; the engine prints its ClickHouse
 * SQL, binds the request's values as it binds them for a server with query parameters, and
 * decodes chdb's answer. Each answer is checked against the corpus' hand-computed oracle.
 * Prints the counts; exits 1 when a query answers otherwise than BigQuery, or is refused where
 * BigQuery answers it. The counts are in docs/supabase.md, "The Logs Explorer".
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { clickhouseEngine, clickhouseLoader } from '../src/clickhouse';
import { createHandler } from '../src/http';
import { createEndpoints, supabasePreset } from '../src/index';
import { toNodeListener } from '../src/node';
import { askExplorer, explorerDataset, EXPLORER_NOW, explorerProblem } from '../test/support/explorer-corpus';
import { EXPLORER_QUERIES } from '../test/support/explorer-queries';
import { listen } from '../test/support/http';
import { shipLikeVector } from '../test/support/supabase/studio-replay';
import { loadChdb, type ChdbSession } from './peers/install-chdb';

const PUBLIC = 'logflare-public-access-token';
const PRIVATE = 'logflare-private-access-token';
const DATABASE = 'explorer_corpus';

/** Settings of the HTTP interface only: chdb has no HTTP, and refuses them. */
const HTTP_ONLY = new Set(['wait_end_of_query']);

/**
 * The one method of `@clickhouse/client` the library calls (`exec`, src/engine/clickhouse/run-sql.ts),
 * answered by a chdb session: the query's settings set first, its `{name:Type}` values bound by
 * chdb, a RowBinary body read from a file of it. Errors carry ClickHouse's code as the client's do.
 */
function chdbClient(session: ChdbSession, dir: string): ClickHouseClient {
  const run = async (query: string, params: object) => {
    try {
      return Buffer.from((await session.queryBindAsync(query, params, { format: 'TSV' })).text());
    } catch (error) {
      const message = String((error as Error)?.message ?? error);
      throw Object.assign(new Error(message), { code: /Code: (\d+)/.exec(message)?.[1] });
    }
  };
  const exec = async (request: { query: string; query_params?: object; clickhouse_settings?: Record<string, unknown>; values?: Readable }) => {
    for (const [name, value] of Object.entries(request.clickhouse_settings ?? {})) {
      if (!HTTP_ONLY.has(name) && /^[a-z_]+$/.test(name) && /^[0-9A-Za-z_]+$/.test(String(value))) await run(`SET ${name} = ${value}`, {});
    }
    let query = request.query;
    if (request.values) {
      const chunks: Buffer[] = [];
      for await (const chunk of request.values) chunks.push(Buffer.from(chunk as Buffer));
      const file = join(dir, `${randomUUID()}.bin`);
      await writeFile(file, Buffer.concat(chunks));
      // `INSERT INTO t (cols) FORMAT RowBinary` with the body in a file.
      query = query.replace(/\s*FORMAT RowBinary\s*$/, ` FROM INFILE '${file}' FORMAT RowBinary`);
    }
    const body = await run(query, request.query_params ?? {});
    return { stream: Readable.from([body]), query_id: randomUUID(), response_headers: {} };
  };
  return { exec, close: async () => undefined } as unknown as ClickHouseClient;
}

async function main(): Promise<void> {
  const log = (line: string) => console.log(line);
  const { Session } = await loadChdb(log);
  const dir = await mkdtemp(join(tmpdir(), 'le-explorer-chdb-'));
  const session = new Session(join(dir, 'chdb'));
  try {
    log(`chdb: ClickHouse ${session.query('SELECT version()', 'TSV').trim()}`);
    const client = chdbClient(session, dir);
    const target = { client, database: DATABASE, sourceDefinitions: supabasePreset.sourceDefinitions };
    const loader = clickhouseLoader(target);
    await loader.init();
    await loader.close();
    const { events, tables } = explorerDataset();
    const ep = await createEndpoints({
      ...supabasePreset,
      engine: clickhouseEngine(target),
      storage: { dataDir: join(dir, 'data'), clickhouse: clickhouseLoader(target) },
      now: () => EXPLORER_NOW,
      cache: false,
    });
    const server = await listen(toNodeListener(createHandler(ep, { apiKeys: [PRIVATE], ingestKeys: [PUBLIC] })));
    try {
      const shipped = await shipLikeVector(server.url, PUBLIC, events);
      for (let waited = 0; (ep.stats().storage?.shippedEvents ?? 0) < shipped; waited += 100) {
        if (waited > 120_000) throw new Error(`only ${ep.stats().storage?.shippedEvents ?? 0} of ${shipped} events shipped into chdb after 2 minutes`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      log(`shipped ${shipped} events into chdb`);
      const counts = { right: 0, refusedAsBigQuery: 0, refusedWhereBigQueryAnswers: 0, different: 0 };
      for (const query of EXPLORER_QUERIES) {
        const answer = await askExplorer(server.url, PRIVATE, query.sql);
        const problem = explorerProblem(query, answer, tables, query.expect);
        if (problem === null) counts[query.expect === 'bigquery-refuses' ? 'refusedAsBigQuery' : 'right']++;
        else if (query.expect === 'answers' && answer.status === 400) counts.refusedWhereBigQueryAnswers++;
        else counts.different++;
        if (problem !== null) log(`  ${query.id}: ${problem.slice(0, 400)}`);
      }
      log(
        `explorer corpus on chdb: ${EXPLORER_QUERIES.length} queries, ${counts.right} answered right, ${counts.refusedAsBigQuery} refused as BigQuery refuses them, ${counts.refusedWhereBigQueryAnswers} refused where BigQuery answers, ${counts.different} answered differently`,
      );
      if (counts.different + counts.refusedWhereBigQueryAnswers > 0) process.exitCode = 1;
    } finally {
      await server.close();
      await ep.close();
    }
  } finally {
    session.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
