import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A key check that takes the same time whatever the key: both sides are hashed to 32 bytes
 * first, so neither the length nor the content of a configured key leaks through timing, and
 * every configured key is compared (no early exit on a match).
 */
export function createKeyCheck(keys: readonly string[]): (presented: string | null) => boolean {
  const digests = keys.map(sha256);
  // Keys that already passed the full check. A repeated valid key (every request of a dashboard)
  // then costs a Map lookup instead of a sha256 and the compares: a third of a cache hit's time.
  // Timing stays safe: only keys that were verified are ever stored (at most one string per
  // configured key, `presentedKey` trims), so a lookup tells a caller no more than the answer's
  // own 200 or 401 does. A wrong key misses (its hash differs, or in the rare collision a string
  // compare against a key it does not know rejects it) and then takes the constant-time path.
  const verified = new Set<string>();
  return (presented) => {
    if (presented === null || presented === '') return false;
    if (verified.has(presented)) return true;
    const digest = sha256(presented);
    let ok = false;
    for (const known of digests) ok = timingSafeEqual(digest, known) || ok;
    if (ok && verified.size < digests.length) verified.add(presented);
    return ok;
  };
}

/** The key of a request: `X-API-KEY`, else the token of `Authorization: Bearer <token>`. */
export function presentedKey(header: (name: string) => string | null): string | null {
  const key = header('x-api-key');
  if (key !== null && key !== '') return key.trim();
  const authorization = header('authorization');
  const bearer = authorization === null ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return bearer ? bearer[1]! : null;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
