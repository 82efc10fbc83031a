import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import Koa from 'koa';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BusyError, ServiceUnavailableError } from '#infra/errors.ts';
import { createLogger } from '#infra/logger.ts';
import { errorMiddleware } from '#web/middleware/errors.server.tsx';

/**
 * A request refused for load (searches taking turns, every connection in use) is a warning for the
 * operator, one line without a stack; a dependency down or a bug is an error. Under a flood every refused
 * request logged an error with its stack (helper-39), which alerting reads as the server failing.
 */
const lines: { level: number; msg: string; err?: unknown }[] = [];
let server: ReturnType<Koa['listen']>;
let url: string;

beforeAll(async () => {
  const destination = new PassThrough();
  destination.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
  });
  const app = new Koa();
  app.use(errorMiddleware(createLogger('info', destination)));
  app.use((ctx) => {
    if (ctx.path === '/busy') throw new BusyError('Rivals is busy answering other searches right now.');
    if (ctx.path === '/down')
      throw new ServiceUnavailableError('Rivals cannot reach its database right now.');
    throw new Error('a bug');
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const get = (path: string) => fetch(url + path, { headers: { 'X-Requested-With': 'XMLHttpRequest' } });
const loggedFor = async (path: string) => {
  const before = lines.length;
  const answer = await get(path);
  await new Promise((resolve) => setImmediate(resolve));
  return { answer, logged: lines.slice(before) };
};

it('a request refused for load answers 503 and logs one warning, without a stack', async () => {
  const { answer, logged } = await loggedFor('/busy');
  expect(answer.status).toBe(503);
  expect(answer.headers.get('retry-after')).toBe('2');
  expect(logged).toHaveLength(1);
  expect(logged[0]?.level).toBe(40);
  expect(logged[0]?.msg).toBe('Rivals is busy answering other searches right now.');
  expect(logged[0]?.err).toBeUndefined();
});

it('a dependency down and a bug stay errors', async () => {
  const down = await loggedFor('/down');
  expect(down.answer.status).toBe(503);
  expect(down.logged.map((line) => line.level)).toEqual([50]);
  const bug = await loggedFor('/bug');
  expect(bug.answer.status).toBe(500);
  expect(bug.logged.map((line) => line.level)).toEqual([50]);
});
