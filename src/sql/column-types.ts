/**
 * The types of result columns and of log source columns: they drive row shaping, every output
 * format, and the SQL types a source's relation is built with.
 */
export type ColumnType = 'timestamp' | 'integer' | 'float' | 'text' | 'json' | 'boolean';
