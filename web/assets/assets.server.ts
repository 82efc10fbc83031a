import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Middleware } from 'koa';
import { StartupError } from '#infra/errors.ts';
import { decodeComponent } from '../input.server.ts';

export interface Assets {
  /** Public URL of a built entry: `main.js`, `app.css`. */
  url(name: string): string;
  middleware: Middleware;
}

const contentTypes: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Serves the built bundle from `dir`. File names carry content hashes, so responses are cached for a
 * year and marked immutable. Only files under `dir` with a known type are served.
 */
export async function loadAssets(dir: string): Promise<Assets> {
  let manifest: Record<string, string>;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as Record<string, string>;
  } catch {
    throw new StartupError(
      `The browser bundle is missing in ${dir}. Run "npm run build" (npm start does it for you).`,
    );
  }
  const root = path.resolve(dir);
  return {
    url(name) {
      const url = manifest[name];
      if (!url) throw new Error(`no built asset named ${name}`);
      return url;
    },
    async middleware(ctx, next): Promise<void> {
      if (!ctx.path.startsWith('/assets/') || (ctx.method !== 'GET' && ctx.method !== 'HEAD'))
        return void (await next());
      const decoded = decodeComponent(ctx.path.slice('/assets'.length));
      if (decoded === undefined) return void (await next()); // a malformed escape names no file: 404
      const file = path.resolve(root, '.' + decoded);
      const type = contentTypes[path.extname(file)];
      if (!file.startsWith(root + path.sep) || !type || file.endsWith('manifest.json'))
        return void (await next());
      const info = await stat(file).catch(() => undefined);
      if (!info?.isFile()) return void (await next());
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = type;
      ctx.length = info.size;
      ctx.body = ctx.method === 'HEAD' ? null : await readFile(file);
    },
  };
}
