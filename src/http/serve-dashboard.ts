import { createHash } from 'node:crypto';
import { LogEndpointsError } from '../errors';
import type { PlainRequest, PlainResponse } from './exchange';
import { send } from './respond';
import { loadDashboardAssets, type DashboardAsset } from '../dashboard/dashboard-assets';
import { pageHtml } from '../dashboard/page-html';

/**
 * Only this server's own script and styles, data requests to this server only, no frames, no
 * plugins, no forms posting anywhere. `data:` images are the empty favicon (it keeps the browser
 * from asking the server for /favicon.ico, which would need a key).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A year: the longest lifetime caches honour; the name changes with the content anyway. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Options of the dashboard (`createHandler(ep, { dashboard: { ... } })`). */
export interface DashboardOptions {
  /** The folder of a page build (default: `dist/dashboard` of this package). */
  assetsDir?: string;
}

/** The dashboard's two kinds of answer: the page, and its content-named assets. */
export interface Dashboard {
  /** The HTML page (`GET {base}/`, `{base}/dashboard`). Needs no key; every data request does. */
  page(request: PlainRequest): PlainResponse;
  /** A built asset by its served name; any other name is 404 `not_found`. */
  asset(name: string, request: PlainRequest): PlainResponse;
}

/**
 * Reads the page build once (throws when it is missing) and answers from memory. Without `auth`
 * (a handler made with `auth: false`) the page does not ask for a key.
 */
export function createDashboard(basePath: string, options: DashboardOptions = {}, auth = true): Dashboard {
  const assets = loadDashboardAssets(options.assetsDir);
  const html = new TextEncoder().encode(pageHtml(basePath, assets, auth));
  const htmlTag = etag(html);
  const byName = new Map<string, DashboardAsset & { etag: string }>([assets.js, assets.css].map((a) => [a.name, { ...a, etag: `"${a.name}"` }]));
  return {
    page(request) {
      const headers = {
        'Content-Type': 'text/html; charset=utf-8',
        // The page names its assets by content, so a revalidated page always loads the current build.
        'Cache-Control': 'no-cache',
        ETag: htmlTag,
        'Content-Security-Policy': DASHBOARD_CSP,
        'X-Content-Type-Options': 'nosniff',
        'X-Frame-Options': 'DENY',
        'Referrer-Policy': 'no-referrer',
      };
      return notModified(request, htmlTag, headers) ?? send(200, html, headers);
    },
    asset(name, request) {
      const found = byName.get(name);
      if (!found) throw new LogEndpointsError('not_found', 404, 'No such dashboard asset (the page names its assets by content; reload it).');
      const headers = { 'Content-Type': found.contentType, 'Cache-Control': IMMUTABLE, ETag: found.etag, 'X-Content-Type-Options': 'nosniff' };
      return notModified(request, found.etag, headers) ?? send(200, found.bytes, headers);
    },
  };
}

function etag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`;
}

/** 304 when the client already holds these bytes (`If-None-Match` lists the tag, or `*`). */
function notModified(request: PlainRequest, tag: string, headers: Record<string, string>): PlainResponse | null {
  const header = request.header('if-none-match');
  if (header === null) return null;
  const tags = header.split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (!tags.includes(tag) && !tags.includes('*')) return null;
  return { status: 304, headers: { ...headers }, body: null };
}
