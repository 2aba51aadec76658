import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** A file the pages load, as the producer serves it. */
export interface PageAsset {
  body: string;
  type: string;
  /**
   * The `Cache-Control` header.
   * @defaultValue `no-cache` (revalidated: the producer's own files change with it)
   */
  cacheControl?: string;
}

const require = createRequire(import.meta.url);
const UPLOT_VERSION = (require('uplot/package.json') as { version: string }).version;
/** A vendored file's name carries its version, so it may be kept for a year. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The fleet overview chart's files under the pages' assets path: uPlot (from its package) and the script that draws with it. */
export const OVERVIEW_ASSET_FILES = {
  uplotScript: `uplot-${UPLOT_VERSION}.iife.min.js`,
  uplotStyles: `uplot-${UPLOT_VERSION}.min.css`,
  chartScript: 'overview-chart.js',
  styles: 'overview.css',
} as const;

/** The overview's assets by file name, served by the pages' asset route (no CDN). */
export const OVERVIEW_ASSETS: Readonly<Record<string, PageAsset>> = {
  [OVERVIEW_ASSET_FILES.uplotScript]: {
    body: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    type: JS,
    cacheControl: IMMUTABLE,
  },
  [OVERVIEW_ASSET_FILES.uplotStyles]: {
    body: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
    type: CSS,
    cacheControl: IMMUTABLE,
  },
  // src/ui and dist/ui both sit two levels under apps/producer, beside assets/.
  [OVERVIEW_ASSET_FILES.chartScript]: {
    body: readFileSync(new URL('../../assets/overview-chart.js', import.meta.url), 'utf8'),
    type: JS,
  },
  [OVERVIEW_ASSET_FILES.styles]: {
    body: readFileSync(new URL('../../assets/overview.css', import.meta.url), 'utf8'),
    type: CSS,
  },
};
