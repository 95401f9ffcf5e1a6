import { describe, expect, it } from 'vitest';
import { RowBinaryWriter } from '../src/engine/clickhouse/row-binary';
import { addMissingColumns, flatJsonColumns, schemaStatements } from '../src/engine/clickhouse/schema';
import { flattenJson, jsonKeyPath } from '../src/util/json-flat-paths';
import { edgeLogs } from '../src/index';

describe('JSON flattened to paths and values (what ClickHouse reads fields from)', () => {
  it('lists every node under the root with its JSON text as written, children before parents, elements in order', () => {
    expect(flattenJson('{"request":{"path":"/a","tags":[1, {"x":"y\\"z"}]},"a.b":null,"n":1.50e3,"[k\\\\":true}')).toEqual({
      paths: ['.request.path', '.request.tags[0]', '.request.tags[1].x', '.request.tags[1]', '.request.tags', '.request', '.a\\.b', '.n', '.\\[k\\\\'],
      values: ['"/a"', '1', '"y\\"z"', '{"x":"y\\"z"}', '[1, {"x":"y\\"z"}]', '{"path":"/a","tags":[1, {"x":"y\\"z"}]}', 'null', '1.50e3', 'true'],
    });
    expect(flattenJson('[{"a":1},2]')).toEqual({ paths: ['[0].a', '[0]', '[1]'], values: ['1', '{"a":1}', '2'] });
    expect(jsonKeyPath(['a.b', '[k\\'])).toBe('.a\\.b.\\[k\\\\');
  });

  it('gives no paths for what is not JSON, or a scalar root', () => {
    for (const text of [null, '', 'nope', '{"a":1} x', '{"a":}', '{"a":1', '[1,]', '{a:1}']) expect(flattenJson(text)).toEqual({ paths: [], values: [] });
    expect(flattenJson('1')).toEqual({ paths: [], values: [] });
  });

  it('adds the two columns per JSON column of every source to new and existing tables', () => {
    expect(flatJsonColumns(edgeLogs).map((c) => `${c.name} ${c.type} DEFAULT ${c.default}`)).toEqual(['_metadata_paths Array(String) DEFAULT []', '_metadata_values Array(String) DEFAULT []']);
    expect(schemaStatements({ database: 'logs' }).join('\n')).toContain('`_metadata_paths` Array(String) DEFAULT []');
    const present = new Set(['timestamp', 'project', 'appname', 'severity', 'id', 'event_message', 'metadata', 'request_path', 'request_url', 'status_code', '_wal_segment', '_wal_offset']);
    expect(addMissingColumns({ database: 'logs' }, edgeLogs, 'edge_logs', present)).toEqual([
      'ALTER TABLE `logs`.`edge_logs` ADD COLUMN `_metadata_paths` Array(String) DEFAULT [], ADD COLUMN `_metadata_values` Array(String) DEFAULT []',
    ]);
  });

  it('writes Array(String) in RowBinary as a count and its strings', () => {
    const writer = new RowBinaryWriter();
    writer.writeRow(['string-array', 'string-array'], [['ab', 'é'], []]);
    expect([...writer.take()]).toEqual([2, 2, 0x61, 0x62, 2, 0xc3, 0xa9, 0]);
  });
});
