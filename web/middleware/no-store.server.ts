import type { Middleware } from 'koa';

/**
 * Nothing is kept by a browser or a cache in between unless its route says otherwise (the hashed
 * assets, a table refresh with its ETag): a page holds its user's data and their form token, and a
 * stored one is shown again, as it was, by Back after sign-out.
 */
export const noStoreByDefault: Middleware = (ctx, next) => {
  ctx.set('Cache-Control', 'no-store');
  return next();
};
