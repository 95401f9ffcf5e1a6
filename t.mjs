import { DuckDBInstance } from '@duckdb/node-api';
const inst = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', threads: '2' });
const c = await inst.connect();
async function q(sql, params) { try { const r = await c.runAndReadAll(sql, params); console.log(JSON.stringify(r.getRowObjectsJson())); } catch (e) { console.log('ERR', e.message); } }
await q(`SET TimeZone='UTC'`);
await q(`SELECT id, timestamp, project, metadata, metadata->>'$.request.path' p, TRY_CAST(metadata->>'$.execution_time_ms' AS DOUBLE) et, TRY_CAST(metadata->>'$.response.status_code' AS INTEGER) sc FROM read_json(['/tmp/x/a.ndjson'], format='newline_delimited', columns={id:'VARCHAR', timestamp:'VARCHAR', project:'VARCHAR', metadata:'JSON'}, ignore_errors=true)`);
await q(`SELECT s, CASE WHEN regexp_full_match(s, '-?[0-9]+') THEN make_timestamp(s::BIGINT) ELSE s::TIMESTAMPTZ::TIMESTAMP END t FROM (VALUES ('2026-11-21T10:15:02.123456789+02:00'), ('1795256102123456'), ('2026-11-21 10:15:02'), ('2026-11-21T10:15:02.5-0130'), ('2026-11-21T10:15:02.5-01:30'), ('2026-11-21')) v(s)`);
await q(`SELECT file FROM glob($1)`, ['/tmp/x/*.ndjson']);
await q(`SELECT file FROM glob($1)`, ['/tmp/nonexist/*.ndjson']);
await q(`SELECT regexp_matches('', $1)`, ['(']);
await q(`SELECT date_trunc($1, TIMESTAMP '2026-11-21 10:15:02.5') t`, ['minute']);
await q(`SELECT count(*) FROM read_json(['/tmp/x/a.ndjson'], format='newline_delimited', columns={id:'VARCHAR'}, ignore_errors=true)`);
