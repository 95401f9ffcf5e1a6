import { randomUUID } from 'node:crypto';

const SANE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The request's own `X-Request-Id` when it looks like an id (so traces join up across a proxy),
 * otherwise a new UUID: a caller must not be able to put arbitrary text into logs and headers.
 */
export function requestIdOf(header: (name: string) => string | null): string {
  const incoming = header('x-request-id');
  return incoming !== null && SANE.test(incoming) ? incoming : randomUUID();
}
