import type { Expr, QueryIR } from './ir';
import type { Node } from './parse-bigquery';
import type { Scope } from './scope';
import type { SourceText } from './string-literal';

/** What translating one expression needs: its names, what it may hold, and the query translator. */
export interface ExprContext {
  src: SourceText;
  scope: Scope;
  /** SELECT aliases a bare name means first (GROUP BY, HAVING, ORDER BY), with their 1-based position. */
  outputs: Map<string, { e: Expr; index: number }> | null;
  /** Whether aggregate functions may appear here (SELECT, HAVING, ORDER BY of a grouped query). */
  aggregates: boolean;
  /** Translates a subquery seeing `scope` (correlated names). */
  query(node: Node, scope: Scope | null): QueryIR;
  /** Translates an expression (expressions.ts), for the function handlers. */
  translate(node: unknown, ctx: ExprContext): Expr;
}
