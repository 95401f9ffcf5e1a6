import { defineEndpoint } from '../../src/index';

/**
 * An endpoint answering every id of a relation with how many times a query reads it: what the
 * retry suites count to prove an event stored once.
 *
 * @example
 * const rows = await ep.query('copies.edge_logs', {}); // [{ id: '…', copies: 1 }, …]
 */
export const copiesEndpoint = (relation: string) =>
  defineEndpoint({
    name: `copies.${relation}`,
    sql: { duckdb: `SELECT id, count(*)::INTEGER AS copies FROM ${relation} GROUP BY id ORDER BY id` },
    maxRows: 100_000,
    columns: { id: 'text', copies: 'integer' },
  });
