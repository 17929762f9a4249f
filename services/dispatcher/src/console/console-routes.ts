import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ErrorCode } from '@agent-saga/core';

/**
 * The operator's web console: plain HTML, CSS and ES modules from `./assets`, served at `/console` outside
 * the `/v1` auth hook (the page itself holds no data; every request it makes carries the bearer token the
 * operator pasted). No framework and no build step: what is in `assets/` is what the browser gets.
 *
 * The files are read once when the plugin is registered and served from memory by name, so only the files
 * that were there at start can ever be served (no path from the URL reaches the file system). The routes
 * are hidden from the OpenAPI document: they are not part of the API.
 */

const ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Everything from our own origin and nothing else: no inline script or style (the app sets none), no
 * framing, and no form may submit anywhere (the sign-in form is handled by script; were the script to fail,
 * the token must not travel in a form submission).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Small files, changed with the deployment: always revalidate, so an upgrade is seen on the next load.
  'cache-control': 'no-cache',
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

async function loadAssets(): Promise<ReadonlyMap<string, Asset>> {
  const assets = new Map<string, Asset>();
  for (const name of await readdir(ASSETS_DIR)) {
    const type = CONTENT_TYPES[extname(name)];
    if (type) assets.set(name, { body: await readFile(join(ASSETS_DIR, name)), type });
  }
  if (!assets.has('index.html')) throw new Error(`console assets missing index.html in ${ASSETS_DIR}`);
  return assets;
}

const assetParams = z.object({ asset: z.string().max(100) });

/** GET /console (and /console/): the app; GET /console/{file}: its scripts, styles and icon. */
export const consoleRoutes: FastifyPluginAsyncZod = async (app) => {
  const assets = await loadAssets();
  const index = assets.get('index.html')!;

  app.get('/console', { schema: { hide: true } }, (_req, reply) =>
    reply.headers(SECURITY_HEADERS).type(index.type).send(index.body),
  );

  app.get('/console/:asset', { schema: { hide: true, params: assetParams } }, (req, reply) => {
    const asset = req.params.asset === '' ? index : assets.get(req.params.asset);
    if (!asset)
      return reply
        .code(404)
        .send({ error: { code: ErrorCode.NOT_FOUND, message: `no console file ${req.params.asset}` } });
    return reply.headers(SECURITY_HEADERS).type(asset.type).send(asset.body);
  });
};
