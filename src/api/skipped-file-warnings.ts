import type { SkippedFile } from '../files/file-checks';
import type { EndpointsOptions } from './public-types';

/**
 * Tells `onWarning` about each file left out of answers once (per path, reason and message): a
 * backlog being recovered is told by the answers while it lasts (and by `stats()`), not as a
 * warning; a failing hook never fails the query.
 *
 * @example
 * const warnings = new SkippedFileWarnings((w) => console.warn(w.message));
 * warnings.tell(result.skippedFiles);
 */
export class SkippedFileWarnings {
  readonly #told = new Set<string>();

  constructor(private readonly hook: EndpointsOptions['onWarning']) {}

  tell(files: readonly SkippedFile[]): void {
    const hook = this.hook;
    if (!hook) return;
    for (const file of files) {
      if (file.reason === 'recovering') continue;
      const key = `${file.path}\0${file.reason}\0${file.message}`;
      if (this.#told.has(key)) continue;
      if (this.#told.size > 10_000) this.#told.clear();
      this.#told.add(key);
      try {
        hook({ code: 'file_skipped', message: `${file.path} is left out of answers: ${file.message}`, file });
      } catch {
        // A failing hook must not fail the query.
      }
    }
  }
}
