import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_BODY_LINGER_MS } from '#web/middleware/body-limits.server.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';

/**
 * A body the server refuses before reading it whole (too large, declared or as it comes; a type it does
 * not read) is answered at once, and its connection closed: `Connection: close`, nothing more read. The
 * rest was read and dropped until the body ended, so a client sending a huge body slowly held the
 * connection until the request timeout (30 s in production), and an upload was taken in whole.
 */
describe.each(databaseBackends)('a refused body closes its connection on %s', (backend) => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
  });
  afterAll(async () => app?.close());

  /** Sends `head`, then a kilobyte of body every 50 ms until the server closes; times what came back. */
  async function sendSlowly(head: string, piece: (i: number) => Buffer) {
    const { port } = new URL(app.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    const started = Date.now();
    let answer = '';
    let answeredAt = Number.NaN;
    let endedAt = Number.NaN;
    let sent = 0;
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (Number.isNaN(answeredAt) && /\r\n\r\n/.test(answer)) answeredAt = Date.now() - started;
    });
    socket.on('end', () => (endedAt = Date.now() - started));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((resolve) =>
      socket.once('close', () => resolve(Date.now() - started)),
    );
    socket.write(head);
    let i = 0;
    const timer = setInterval(() => {
      if (!socket.writable) return;
      const chunk = piece(i++);
      sent += chunk.length;
      socket.write(chunk);
    }, 50);
    const closedAt = await Promise.race([
      closed,
      new Promise<number>((resolve) => setTimeout(() => resolve(-1), 8_000)),
    ]);
    clearInterval(timer);
    socket.destroy();
    return { answer, answeredAt, endedAt, closedAt, sent };
  }

  const kilobyte = () => Buffer.alloc(1024, 0x61);
  const cases = [
    {
      name: 'a huge declared JSON body',
      head: 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n',
      piece: kilobyte,
      status: 413,
      says: 'The request is too large: at most 64 kB can be sent here, so nothing was saved. Shorten what you sent and send it again.',
    },
    {
      name: 'a huge upload of a type not read',
      head: 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 1000000000\r\n\r\n',
      piece: kilobyte,
      status: 415,
      says: 'other bodies (such as file uploads) are not accepted',
    },
    {
      name: 'a form sent in chunks past the limit',
      head: 'POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n',
      // 16 kB a piece: past the 64 kB limit after a few, then on and on.
      piece: () => Buffer.concat([Buffer.from('4000\r\n'), Buffer.alloc(0x4000, 0x61), Buffer.from('\r\n')]),
      status: 413,
      says: 'The request is too large: at most 64 kB can be sent here, so nothing was saved. Shorten what you sent and send it again.',
    },
  ];

  it.each(cases)('$name: answered at once, then closed by the server within seconds', async (c) => {
    const result = await sendSlowly(c.head, c.piece);
    expect(result.answer).toMatch(new RegExp(`^HTTP/1\\.1 ${c.status} `));
    expect(result.answer.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(result.answer).toContain(c.says);
    expect(result.answeredAt).toBeLessThan(2_000);
    // The server ends its side once the answer is written, and closes the connection soon after,
    // far before the request timeout, with the client still sending.
    expect(result.endedAt).toBeLessThan(3_000);
    expect(result.closedAt).toBeGreaterThan(0);
    expect(result.closedAt).toBeLessThan(REFUSED_BODY_LINGER_MS + 3_000);
    // …and read little of what was sent after the answer: no more than the lingering let through.
    expect(result.sent).toBeLessThan(2_000_000);
  });

  it('a body within the limits is still read and answered on a connection kept alive', async () => {
    const { port } = new URL(app.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
    socket.on('error', () => undefined);
    const form = 'email=a%40b.example&password=x';
    const request = `POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`;
    socket.write(request + request.replace('POST /login', 'GET /login').replace(/Content-Type[^]*$/, '\r\n'));
    for (let waited = 0; (answer.match(/HTTP\/1\.1 \d+/g)?.length ?? 0) < 2 && waited < 5_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    expect(answer.match(/HTTP\/1\.1 \d+/g)).toHaveLength(2);
    expect(answer.toLowerCase()).not.toContain('connection: close');
  });
});
