/** What a call bounded by `withinTime` came to. */
export type Bounded<T> = { ok: true; value: T } | { ok: false; timedOut: boolean; late: Promise<T> };

/**
 * Waits for `call` at most `ms` milliseconds of real time. A store that hangs (Redis gone, a
 * network that drops packets) costs a caller at most that long; the call itself goes on, and
 * `late` lets the caller clean up after it (release a lock it got too late).
 */
export async function withinTime<T>(call: () => Promise<T>, ms: number): Promise<Bounded<T>> {
  const running = Promise.resolve().then(call);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => {
    timer = setTimeout(() => resolve(EXPIRED), ms);
    timer.unref();
  });
  try {
    const first = await Promise.race([running, expired]);
    if (first === EXPIRED) {
      running.catch(() => undefined);
      return { ok: false, timedOut: true, late: running };
    }
    return { ok: true, value: first as T };
  } catch {
    return { ok: false, timedOut: false, late: running };
  } finally {
    clearTimeout(timer);
  }
}

const EXPIRED = Symbol('expired');
