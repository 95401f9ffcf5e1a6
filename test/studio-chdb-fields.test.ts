import { describe, expect, it } from 'vitest';
import { supabasePreset } from '../src/index';
import { chdbColumnsOf, chdbField } from '../bench/studio-chdb-fields';
import { studioCases } from '../bench/studio-cases';

// The Studio bench's chdb peer (docs/performance.md, "Supabase Studio's queries"): a nested field
// the Supabase descriptor of its table declares typed is read from a MATERIALIZED column named
// from its path, any other from the JSON; each case lists the columns it reads, so the section
// gives chdb exactly those before asking.
describe("the Studio bench's chdb columns", () => {
  const typed = (relation: string) => supabasePreset.sourceDefinitions.find((d) => d.relation === relation)!.typedFields;

  it('reads a declared typed field from its column and any other from the JSON', () => {
    expect(typed('postgres_logs')).toContain('parsed.error_severity');
    expect(chdbField('postgres_logs', 'parsed.error_severity', 'Nullable(String)')).toEqual({
      sql: 'metadata_parsed_error_severity',
      column: { table: 'postgres_logs', column: 'metadata_parsed_error_severity', type: 'Nullable(String)', expression: "JSONExtract(metadata, 'parsed', 'error_severity', 'Nullable(String)')" },
    });
    expect(typed('postgres_logs')).not.toContain('parsed.detail');
    expect(chdbField('postgres_logs', 'parsed.detail', 'Nullable(String)')).toEqual({ sql: "JSONExtract(metadata, 'parsed', 'detail', 'Nullable(String)')", column: null });
    // The same path on a table whose descriptor does not declare it: the JSON.
    expect(chdbField('auth_logs', 'parsed.error_severity', 'Nullable(String)').column).toBeNull();
  });

  it("gives each case's SQL the columns it reads, and no case reads a typed field from the JSON", () => {
    const cases = studioCases('some-id');
    for (const c of cases) {
      for (const col of c.clickhouse.columns) expect(c.clickhouse.sql).toContain(col.column);
      for (const path of [...typed('edge_logs'), ...typed('postgres_logs')])
        expect(c.clickhouse.sql).not.toContain(
          `JSONExtract(metadata, ${path
            .split('.')
            .map((k) => `'${k}'`)
            .join(', ')}`,
        );
    }
    const columns = chdbColumnsOf(cases.map((c) => c.clickhouse)).map((c) => `${c.table}.${c.column} ${c.type}`);
    expect(columns.sort()).toEqual([
      'edge_logs.metadata_request_method Nullable(String)',
      'edge_logs.metadata_request_path Nullable(String)',
      'edge_logs.metadata_request_search Nullable(String)',
      'edge_logs.metadata_response_status_code Nullable(Int64)',
      'postgres_logs.metadata_parsed_error_severity Nullable(String)',
      'postgres_logs.metadata_parsed_user_name Nullable(String)',
    ]);
  });

  it('refuses a column read as two types', () => {
    const as = (type: string) => ({ columns: [chdbField('edge_logs', 'response.status_code', type).column!] });
    expect(() => chdbColumnsOf([as('Nullable(Int64)'), as('Nullable(String)')])).toThrow(/edge_logs\.metadata_response_status_code is read as Nullable\(Int64\) and as Nullable\(String\)/);
  });
});
