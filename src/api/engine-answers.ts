import type { Engine } from '../engine/engine';

/**
 * Whether the engine answers a ping within a time: one ping at a time, so health checks of a stuck
 * engine do not pile pings up behind it, and a busy engine (a long query holding DuckDB's threads)
 * makes the report say so, never wait.
 *
 * @example
 * const answers = new EngineAnswers(engine);
 * if (!(await answers.within(500))) degraded.add('engine');
 */
export class EngineAnswers {
  #pinging: Promise<boolean> | null = null;

  constructor(private readonly engine: Pick<Engine, 'ping'>) {}

  within(timeoutMs: number): Promise<boolean> {
    this.#pinging ??= Promise.resolve()
      .then(() => this.engine.ping())
      .then(
        () => true,
        () => false,
      )
      .finally(() => (this.#pinging = null));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    return Promise.race([this.#pinging, late]).finally(() => clearTimeout(timer));
  }
}
