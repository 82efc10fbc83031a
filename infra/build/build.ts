import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const assetsDir = path.join(root, 'dist/assets');

/**
 * Builds the browser bundle: ESM with code splitting (SweetAlert2 and SortableJS load on demand),
 * content-hashed file names for long-lived caching, and a manifest the server reads at start.
 */
export async function buildAssets(options: { minify?: boolean } = {}): Promise<Record<string, string>> {
  await rm(assetsDir, { recursive: true, force: true });
  await mkdir(assetsDir, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: 'web/client/main.ts', app: 'web/styles/app.css' },
    bundle: true,
    splitting: true,
    format: 'esm',
    target: ['es2022'],
    outdir: assetsDir,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunks/[name]-[hash]',
    assetNames: 'media/[name]-[hash]',
    minify: options.minify ?? true,
    sourcemap: 'linked',
    metafile: true,
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'warning',
  });
  const manifest: Record<string, string> = {};
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    if (!meta.entryPoint) continue;
    const name = path.basename(meta.entryPoint).replace(/\.(ts|tsx|css)$/, '') + path.extname(output);
    manifest[name] = '/assets/' + path.relative(assetsDir, path.join(root, output)).split(path.sep).join('/');
  }
  await writeFile(path.join(assetsDir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const manifest = await buildAssets();
  console.log(
    `built ${Object.keys(manifest).length} entries into ${path.relative(process.cwd(), assetsDir)}`,
  );
}
