import type { AnswerHeaders } from './cache-state';
import type { ApiFailure } from './words';

export type ApiAnswer<T> = { ok: true; body: T; headers: AnswerHeaders } | { ok: false; failure: ApiFailure };

/** Where the API key lives: this tab only, gone when it closes. */
const KEY_ITEM = 'log-endpoints.api-key';

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_ITEM),
  set: (key: string) => sessionStorage.setItem(KEY_ITEM, key),
  forget: () => sessionStorage.removeItem(KEY_ITEM),
};

/** The query string of a data request: empty parameters are left out (absent and empty mean the same). */
export function queryString(params: Record<string, string>): string {
  return new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '')).toString();
}

/**
 * GET `{base}{path}?{params}` with the key as `X-API-KEY`. Never throws: a refused or failed
 * request comes back as an `ApiFailure` the page puts into words; an aborted one rejects.
 */
export async function apiGet<T>(base: string, path: string, params: Record<string, string> = {}, signal?: AbortSignal): Promise<ApiAnswer<T>> {
  const query = queryString(params);
  let response: Response;
  try {
    response = await fetch(`${base}${path}${query ? `?${query}` : ''}`, {
      headers: { 'X-API-KEY': apiKey.get() ?? '', Accept: 'application/json' },
      // Rows are fresh from the server's own cache; the browser's would hide its X-Cache state.
      cache: 'no-store',
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    return { ok: false, failure: { status: 0, network: error instanceof Error ? error.message : String(error) } };
  }
  const body: unknown = await response.json().catch(() => null);
  if (response.ok && body !== null) {
    const header = (name: string) => response.headers.get(name);
    return { ok: true, body: body as T, headers: { xCache: header('X-Cache'), cacheControl: header('Cache-Control'), serverTiming: header('Server-Timing') } };
  }
  const error = (body as { error?: { code?: unknown; message?: unknown; param?: unknown } } | null)?.error;
  const retryAfter = Number(response.headers.get('Retry-After'));
  return {
    ok: false,
    failure: {
      status: response.status,
      ...(typeof error?.code === 'string' ? { code: error.code } : {}),
      ...(typeof error?.message === 'string' ? { message: error.message } : {}),
      ...(typeof error?.param === 'string' ? { param: error.param } : {}),
      ...(retryAfter > 0 ? { retryAfterSeconds: retryAfter } : {}),
      ...(response.headers.get('X-Request-Id') ? { requestId: response.headers.get('X-Request-Id')! } : {}),
    },
  };
}
