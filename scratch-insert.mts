import { DuckDBInstance } from '@duckdb/node-api';
import { MemoryTables } from './src/managed/memory-tables';
import { TIMESTAMP_MACROS } from './src/duckdb/source-relations';
import { SourceSet } from './src/sources/source-set';
import { edgeLogs } from './src/sources/edge-logs';
import { defineSource } from './src/sources/source-descriptor';
import { censusEvents } from './test/support/census';
const plainEdge = defineSource({ name: 'plainEdge', relation: 'plain_edge', logflare: { names: ['plain'] }, columns: { project: 'text', appname: 'text', severity: 'text', request_path: { type: 'text', path: '$.request.path' }, request_url: { type: 'text', path: '$.request.url' }, status_code: { type: 'integer', path: '$.response.status_code', duckdb: 'INTEGER' } }, projectColumn: 'project', parquet: { rowGroupRows: 8192, heads: true } });
const set = SourceSet.of([edgeLogs, plainEdge]);
const batches = Array.from({ length: 40 }, (_, i) => Buffer.from(censusEvents(`b${i}`, 1000).map((e) => `${JSON.stringify(e)}\n`).join('')));
const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
const setup = await instance.connect();
for (const m of TIMESTAMP_MACROS) await setup.run(m);
const memory = new MemoryTables(set, 1 << 30);
memory.attach(instance);
const t = { edgeLogs: 0, plainEdge: 0 } as Record<string, number>;
for (let round = 0; round < 3; round++) for (let i = 0; i < batches.length; i++) for (const s of (i % 2 ? ['edgeLogs', 'plainEdge'] : ['plainEdge', 'edgeLogs'])) {
  const t0 = performance.now(); await memory.insert(s, round * 100 + i + 1, batches[i]!); t[s]! += performance.now() - t0;
}
const bytes = async (table: string) => Number((await setup.runAndReadAll(`SELECT sum(estimated_size) n FROM duckdb_tables() WHERE table_name = '${table}'`)).getRowObjects()[0]!.n);
console.log({ ms_per_1000_events: { typed: t.edgeLogs! / 120, plain: t.plainEdge! / 120 } });
console.log((await setup.runAndReadAll(`SELECT table_name, estimated_size, column_count FROM duckdb_tables()`)).getRowObjectsJson());
console.log((await setup.runAndReadAll(`SELECT * FROM pragma_storage_info('le_memory_edge_logs') LIMIT 0`)).getRowObjectsJson());
memory.close();
