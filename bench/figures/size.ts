// Figure: size and start-up. Each entry is bundled by esbuild with everything it imports (platform
// node, minified, ESM), then gzipped with node:zlib at level 9; ky's own bundle is measured the
// same way as the yardstick. Import time is `import()` in a fresh process (bench/workers/
// import-time.mjs), after a discarded run that warms the disk cache, specifiers interleaved.
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { repeat, runWorker, ROOT } from '../lib/child.ts';
import type { Figure, FigureResult } from '../lib/figure.ts';
import { round, summarize } from '../lib/stats.ts';

const IMPORT_RUNS = 7;
const SPECIFIERS = ['integration-sdk', 'integration-sdk/webhooks', 'ky'];
// Not targets: where the main entry's import time goes (its dependencies, each imported alone).
const ATTRIBUTION = ['zod/mini', 'p-retry', 'fetch-globals'];

async function bundle(entry: string): Promise<{ minBytes: number; gzipBytes: number }> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    write: false,
    logLevel: 'silent',
    absWorkingDir: ROOT,
  });
  const code = result.outputFiles[0]!.contents;
  return { minBytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length };
}

export const sizeFigure: Figure = {
  name: 'size',
  title: 'bundle size (min+gzip) and import time',
  async run(): Promise<FigureResult> {
    const bundles = {
      webhooks: await bundle(`${ROOT}dist/webhooks.js`),
      main: await bundle(`${ROOT}dist/index.js`),
      ky: await bundle(fileURLToPath(import.meta.resolve('ky'))),
    };
    await repeat(SPECIFIERS.length, (i) => runWorker('import-time.mjs', [SPECIFIERS[i]!])); // warm the disk cache
    const all = [...SPECIFIERS, ...ATTRIBUTION];
    const times: Record<string, number[]> = Object.fromEntries(all.map((s) => [s, []]));
    await repeat(IMPORT_RUNS, async () => {
      for (const specifier of all) times[specifier]!.push((await runWorker<{ ms: number }>('import-time.mjs', [specifier])).ms);
    });
    const importMs = Object.fromEntries(all.map((s) => [s, summarize(times[s]!)]));
    const kb = (bytes: number) => bytes / 1024;
    const mainImport = importMs['integration-sdk']!.median;
    return {
      figures: {
        webhooks_entry_gzip_kb: round(kb(bundles.webhooks.gzipBytes), 2),
        main_entry_gzip_kb: round(kb(bundles.main.gzipBytes), 2),
        main_import_ms: round(mainImport, 1),
      },
      details: {
        bundler: 'esbuild, bundle + minify, format esm, platform node; gzip level 9',
        bytes: bundles,
        kyGzipKb: round(kb(bundles.ky.gzipBytes), 2),
        mainXKyGzip: round(bundles.main.gzipBytes / bundles.ky.gzipBytes),
        webhooksXKyGzip: round(bundles.webhooks.gzipBytes / bundles.ky.gzipBytes),
        importRuns: IMPORT_RUNS,
        importMs,
        webhooksImportMs: round(importMs['integration-sdk/webhooks']!.median, 1),
        kyImportMs: round(importMs.ky!.median, 1),
        attributionImportMs: Object.fromEntries(ATTRIBUTION.map((s) => [s, round(importMs[s]!.median, 1)])),
      },
      targets: [
        { target: 'webhooks entry ≤ 12 KB min+gzip, all included', met: kb(bundles.webhooks.gzipBytes) <= 12, measured: `${kb(bundles.webhooks.gzipBytes).toFixed(2)} KB (ky ${kb(bundles.ky.gzipBytes).toFixed(2)} KB)` },
        { target: 'main entry import() ≤ 60 ms', met: mainImport <= 60, measured: `${mainImport.toFixed(1)} ms (ky ${importMs.ky!.median.toFixed(1)} ms)` },
      ],
    };
  },
};
