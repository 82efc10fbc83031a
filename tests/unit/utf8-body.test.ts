import type http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '#infra/errors.ts';
import { bodyLimits, REFUSED_BODY_LINGER_MS, utf8Body } from '#web/middleware/body-limits.server.ts';

/*
 * utf8Body on its own, behind a real HTTP server: what it reads, and what it refuses to read. The limit
 * is on the bytes sent as well as on the bytes they inflate to: a gzip body can be made of empty members
 * (or hold bytes after its end) that inflate to nothing, and were read to the last byte.
 */
const LIMIT = { json: 1024, form: 1024 };

describe('utf8Body', () => {
  let server: http.Server;
  let url: string;
  let reached = 0;
  let settled = 0;

  beforeAll(async () => {
    const app = new Koa();
    app.silent = true;
    app.use(async (ctx, next) => {
      try {
        await next();
      } catch (error) {
        ctx.status = error instanceof AppError ? error.status : 500;
        ctx.body = error instanceof Error ? error.message : 'error';
      } finally {
        settled++;
      }
    });
    // A layer that waits before the body is read (storageGuard's stat on the embedded database).
    app.use(async (ctx, next) => {
      if (ctx.path === '/after-a-wait') await new Promise((resolve) => setTimeout(resolve, 100));
      await next();
    });
    const parse = koaBody({ ...bodyLimits, jsonLimit: LIMIT.json, formLimit: LIMIT.form });
    app.use((ctx, next) => utf8Body(ctx, next, parse, LIMIT));
    app.use((ctx) => {
      reached++;
      ctx.body = { got: ctx.request.body as unknown };
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = (body: Buffer, headers: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: new Uint8Array(body),
    });

  it('reads a gzip body within the limit', async () => {
    const answer = await post(gzipSync('{"a":"é"}'), { 'Content-Encoding': 'GZIP' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ got: { a: 'é' } });
  });

  it('refuses a gzip body of empty members far past the limit, which inflates to nothing', async () => {
    const empty = gzipSync(Buffer.alloc(0));
    const members = Buffer.concat(Array.from({ length: 10_000 }, () => empty));
    expect(members.length).toBeGreaterThan(100 * LIMIT.json);
    const before = reached;
    const answer = await post(members, { 'Content-Encoding': 'gzip' });
    expect(answer.status).toBe(413);
    expect(await answer.text()).toMatch(
      /^The request is too large: at most \d+ kB can be sent here, so nothing was saved\./,
    );
    expect(reached).toBe(before);
  });

  it('refuses a gzip body followed by bytes far past the limit', async () => {
    const body = Buffer.concat([gzipSync('{}'), Buffer.alloc(200 * LIMIT.json)]);
    const before = reached;
    const answer = await post(body, { 'Content-Encoding': 'gzip' });
    expect(answer.status).toBe(413);
    expect(reached).toBe(before);
  });

  it('refuses the same sent in pieces, with no length declared, once past the limit', async () => {
    const empty = gzipSync(Buffer.alloc(0));
    const piece = new Uint8Array(Buffer.concat(Array.from({ length: 100 }, () => empty)));
    let pieces = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (++pieces > 1000) controller.close();
        else controller.enqueue(piece);
      },
    });
    const before = reached;
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(answer.status).toBe(413);
    expect(await answer.text()).toMatch(
      /^The request is too large: at most \d+ kB can be sent here, so nothing was saved\./,
    );
    expect(reached).toBe(before);
  });

  it('answers a refused body with Connection: close and closes the connection instead of reading its rest', async () => {
    // 3 MB sent in pieces past a 1 KiB limit, then a second request on the same connection. Changed on
    // purpose: the rest was read and dropped so that the second request could be answered, which let a
    // client sending slowly hold the connection until the request timeout. Now the answer says the
    // connection closes, and it does; a client sends its next request on a new one.
    const { port } = server.address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    let answers = '';
    socket.on('data', (data: Buffer) => (answers += data.toString()));
    const started = Date.now();
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - started)));
    socket.on('error', () => undefined);
    socket.write(
      'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    const piece = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 48; i++)
      socket.write(Buffer.concat([Buffer.from('10000\r\n'), piece, Buffer.from('\r\n')]));
    socket.write(
      '0\r\n\r\nPOST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    const closedAfter = await Promise.race([
      closed,
      new Promise<number>((r) => setTimeout(() => r(-1), 6_000)),
    ]);
    socket.destroy();
    expect(answers.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 413']);
    expect(answers.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(answers).toContain('The request is too large: at most');
    expect(closedAfter).toBeGreaterThan(0);
    expect(closedAfter).toBeLessThan(REFUSED_BODY_LINGER_MS + 2_000);
  });

  it.each(['identity', 'gzip'])(
    'ends a request (%s) whose client left halfway through the body before it was read',
    async (coding) => {
      // Before: the reader waited for an end or a close that had already happened, so the request never
      // ended, and its context (socket, buffers) was held for the life of the process.
      const before = settled;
      const { port } = server.address() as AddressInfo;
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        `POST /after-a-wait HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: ${coding}\r\nContent-Length: 100\r\n\r\n{"a":`,
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
      for (let waited = 0; settled === before && waited < 1000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(settled).toBe(before + 1);
    },
  );

  it('reads a body whose Content-Encoding is empty as not encoded, as koa-body did', async () => {
    const answer = await post(Buffer.from('{"a":1}'), { 'Content-Encoding': '' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ got: { a: 1 } });
  });
});
