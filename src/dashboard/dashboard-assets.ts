import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidOptionError } from '../errors';

/** The files of a page build, as tsup writes them (`tsup.dashboard.config.ts`). */
export const BUILT_FILES = { js: 'dashboard.js', css: 'dashboard.css' } as const;

/** One built file, named by its content: the name changes whenever a byte does. */
export interface DashboardAsset {
  /** The served file name, e.g. `dashboard.3f2a9c1b0d4e5f60.js`. */
  name: string;
  bytes: Uint8Array;
  contentType: string;
  /** Subresource Integrity of the bytes (`sha384-…`), for the page's `integrity` attributes. */
  integrity: string;
}

export interface DashboardAssets {
  js: DashboardAsset;
  css: DashboardAsset;
}

/**
 * Reads the built page once. A missing build is an error that says how to make one: a handler
 * that would serve a blank page is refused at creation instead.
 */
export function loadDashboardAssets(dir: string = defaultAssetsDir()): DashboardAssets {
  const missing = Object.values(BUILT_FILES).filter((file) => !existsSync(join(dir, file)));
  if (missing.length > 0) {
    throw new InvalidOptionError(
      'dashboard',
      `log-endpoints: the dashboard page is not built (${missing.join(' and ')} missing in ${dir}). ` +
        'Build it with `npm run build:dashboard` (or `npm run build`), or turn the dashboard off (`--no-dashboard` for demo).',
    );
  }
  return {
    js: asset(readFileSync(join(dir, BUILT_FILES.js)), 'dashboard', 'js', 'text/javascript; charset=utf-8'),
    css: asset(readFileSync(join(dir, BUILT_FILES.css)), 'dashboard', 'css', 'text/css; charset=utf-8'),
  };
}

function asset(bytes: Uint8Array, stem: string, extension: string, contentType: string): DashboardAsset {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const integrity = `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
  return { name: `${stem}.${hash}.${extension}`, bytes, contentType, integrity };
}

/**
 * `<package root>/dist/dashboard`: the package root is the nearest folder above this module
 * holding a package.json, which is one answer for the sources (src/dashboard, run by tsx), the
 * bundle (dist/) and an installed package (node_modules/log-endpoints/dist).
 */
export function defaultAssetsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'dist', 'dashboard');
    const parent = dirname(dir);
    if (parent === dir) return resolve('dist', 'dashboard');
    dir = parent;
  }
}
