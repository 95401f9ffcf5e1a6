import { defineConfig, type Options } from 'tsup';

/**
 * The dashboard page (src/dashboard/page) for browsers: one script and one stylesheet in
 * dist/dashboard, uPlot bundled in (a dev dependency: users never install it). The server names
 * them by a hash of their content when it serves them. `npm run build` builds it with the
 * library; `npm run build:dashboard` (run by `npm start`) builds only this.
 */
export const dashboardPage: Options = {
  name: 'dashboard',
  entry: { dashboard: 'src/dashboard/page/main.ts' },
  outDir: 'dist/dashboard',
  format: ['iife'],
  outExtension: () => ({ js: '.js' }),
  platform: 'browser',
  target: 'es2020',
  tsconfig: 'src/dashboard/page/tsconfig.json',
  noExternal: ['uplot'],
  minify: true,
  sourcemap: false,
  dts: false,
  clean: true,
};

export default defineConfig(dashboardPage);
