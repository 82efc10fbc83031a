import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '#infra/logger.ts';
import { errorMiddleware } from '#web/middleware/errors.server.tsx';

/**
 * A 405 says in words what the address takes, from its Allow header. A page's address (GET only, like
 * /audit) sent a POST or a PUT said "This address does not take POST requests; Rivals' pages send their
 * forms here with POST." (helper-51): it contradicted itself and named no way forward.
 */
let server: ReturnType<Koa['listen']>;
let url: string;

beforeAll(async () => {
  const app = new Koa();
  app.use(errorMiddleware(createLogger('info', new PassThrough())));
  const router = new Router();
  router.get('/page', (ctx) => {
    ctx.body = 'a page';
  });
  router.post('/form', (ctx) => {
    ctx.body = 'sent';
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const send = async (method: string, path: string) => {
  const answer = await fetch(url + path, { method, headers: { 'X-Requested-With': 'XMLHttpRequest' } });
  const text = method === 'HEAD' ? '' : await answer.text();
  const message = text ? ((JSON.parse(text) as { error: { message: string } }).error.message ?? '') : '';
  return { status: answer.status, allow: answer.headers.get('allow') ?? '', message };
};

it("a page's address sent a form or another method says it is a page to open, with its Allow", async () => {
  for (const method of ['POST', 'PUT', 'DELETE']) {
    const answer = await send(method, '/page');
    expect(answer.status).toBe(405);
    expect(answer.allow).toContain('GET');
    expect(answer.message).toContain(`does not take ${method} requests`);
    expect(answer.message).toContain('open it');
    expect(answer.message).not.toContain('send their forms here with POST');
  }
});

it("a form's address visited or sent another method says so, with its Allow; a page still answers HEAD", async () => {
  const visit = await send('GET', '/form');
  expect(visit.status).toBe(405);
  expect(visit.allow).toBe('POST');
  expect(visit.message).toContain('not a visit');
  const put = await send('PUT', '/form');
  expect(put.status).toBe(405);
  expect(put.message).toContain('does not take PUT requests');
  expect(put.message).toContain('send their forms here with POST');
  expect((await send('HEAD', '/page')).status).toBe(200);
});
