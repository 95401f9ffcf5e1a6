// Pure (no DOM): unit-tested in `npm test`.

/** The headers of an answer that say how it was obtained. */
export interface AnswerHeaders {
  xCache: string | null;
  cacheControl: string | null;
  serverTiming: string | null;
}

export interface CacheState {
  /** `HIT`, `MISS`, `BYPASS`, or null when the server did not say. */
  cache: string | null;
  /** Seconds since the rows were computed (cached endpoints only). */
  ageSeconds: number | null;
  /** Seconds the rows may still be served (`max-age`). */
  freshSeconds: number | null;
  /** Engine time of the computation that produced the rows (`Server-Timing: engine;dur=`). */
  engineMs: number | null;
}

/**
 * What the headers tell: `X-Cache`, `Cache-Control: private, max-age=<remaining>` and
 * `Server-Timing: engine;dur=<ms>`. The API sends no age, so it is the endpoint's lifetime
 * (from its definition) minus the remaining `max-age`, exact to the second.
 */
export function cacheStateOf(headers: AnswerHeaders, ttlSeconds: number | null): CacheState {
  const maxAge = /(?:^|,)\s*max-age=(\d+)/i.exec(headers.cacheControl ?? '');
  const freshSeconds = maxAge ? Number(maxAge[1]) : null;
  const engine = /(?:^|,)\s*engine\s*;(?:[^,]*;)?\s*dur=([\d.]+)/i.exec(headers.serverTiming ?? '');
  return {
    cache: headers.xCache ? headers.xCache.toUpperCase() : null,
    ageSeconds: freshSeconds !== null && ttlSeconds !== null ? Math.max(0, ttlSeconds - freshSeconds) : null,
    freshSeconds,
    engineMs: engine ? Number(engine[1]) : null,
  };
}

/** One line for a panel, e.g. `cache HIT · computed 2 min 5 s ago · fresh for 12 min 55 s · engine 12.3 ms`. */
export function describeCacheState(state: CacheState): string {
  const parts: string[] = [];
  if (state.cache === 'BYPASS') parts.push('not cached (BYPASS)');
  else if (state.cache === 'MISS') parts.push('cache MISS: computed now');
  else if (state.cache) parts.push(`cache ${state.cache}`);
  if (state.cache === 'HIT' && state.ageSeconds !== null) parts.push(`computed ${duration(state.ageSeconds)} ago`);
  if (state.cache !== 'BYPASS' && state.freshSeconds !== null) parts.push(`fresh for ${duration(state.freshSeconds)}`);
  if (state.engineMs !== null) parts.push(`engine ${state.engineMs.toFixed(1)} ms`);
  return parts.join(' · ');
}

/** `0 s`, `45 s`, `2 min 5 s`, `15 min`, `1 h 3 min`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  const minutes = Math.floor((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${minutes ? ` ${minutes} min` : ''}`;
}
