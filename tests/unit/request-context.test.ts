import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { createLogger, requestContext } from '#infra/logger.ts';
import { requestContextMiddleware } from '#web/middleware/request-context.server.ts';

/** Every log line of a request carries its id: the request line itself, and lines written inside it. */
describe('request context', () => {
  it('gives the handler, its log lines and the request line the id the answer names', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const log = createLogger('info', sink);
    const app = new Koa();
    let seen: string | undefined;
    app.use(requestContextMiddleware(log));
    app.use(async (ctx) => {
      await new Promise((resolve) => setImmediate(resolve));
      seen = requestContext.getStore()?.reqId;
      log.info('inside');
      ctx.body = 'ok';
    });
    const server = createServer(app.callback()).listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/competitors`);
      await response.text();
      const id = response.headers.get('x-request-id') ?? '';
      expect(id).toMatch(/^[\w-]{8,64}$/);
      expect(seen).toBe(id);
      expect(lines.find((l) => l.msg === 'inside')?.reqId).toBe(id);
      expect(lines.find((l) => l.msg === 'request')).toMatchObject({
        reqId: id,
        method: 'GET',
        path: '/competitors',
        status: 200,
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
