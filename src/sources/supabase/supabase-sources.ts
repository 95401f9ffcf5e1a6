import { edgeLogs } from '../edge-logs';
import { functionEdgeLogs } from '../function-edge-logs';
import { authLogs } from './auth-logs';
import { functionLogs } from './function-logs';
import { pgbouncerLogs } from './pgbouncer-logs';
import { postgresLogs } from './postgres-logs';
import { postgrestLogs } from './postgrest-logs';
import { realtimeLogs } from './realtime-logs';
import { storageLogs } from './storage-logs';

export { authLogs, functionLogs, pgbouncerLogs, postgresLogs, postgrestLogs, realtimeLogs, storageLogs };

/**
 * Self-hosted Supabase's sources, one per feed its Vector ships (docs/supabase.md, "Sources"):
 * the two built-ins (the gateway and edge-function invocation logs) and seven more, in the
 * order of Studio's Logs pages.
 */
export const SUPABASE_SOURCES = [edgeLogs, postgresLogs, postgrestLogs, authLogs, storageLogs, realtimeLogs, functionEdgeLogs, functionLogs, pgbouncerLogs] as const;
