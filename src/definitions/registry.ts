import { NotFoundError } from '../errors';
import type { EndpointDefinition } from './definition';
import { functionsInvocationStats } from './functions-invocation-stats';
import { logsAll } from './logs-all';
import { usageApiCounts } from './usage-api-counts';

/** The three endpoints, in a stable order. */
export const DEFINITIONS: readonly EndpointDefinition[] = [functionsInvocationStats, logsAll, usageApiCounts];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const BY_KEY = new Map<string, EndpointDefinition>();
for (const d of DEFINITIONS) {
  BY_KEY.set(d.name, d);
  BY_KEY.set(d.id, d);
}

/** The endpoint with this name or UUID (UUIDs in any letter case), or a `not_found` error. */
export function findDefinition(nameOrId: string): EndpointDefinition {
  const found = BY_KEY.get(UUID.test(nameOrId) ? nameOrId.toLowerCase() : nameOrId);
  if (!found) throw new NotFoundError(`No endpoint is named or identified by "${truncate(nameOrId)}".`);
  return found;
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
