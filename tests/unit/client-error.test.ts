import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenEarly, type EarlyServer } from '#web/listen-early.server.ts';

/**
 * A request Node's parser refuses never reaches the app: without an answer of our own the person got
 * Node's empty 431 (a cookie header over 16 kB) or 400, and a blank page. The server Rivals listens on
 * answers them in a sentence, and goes on serving.
 */
let early: EarlyServer;
let port: number;
beforeAll(async () => {
  early = await listenEarly(0, '127.0.0.1');
  early.serve((_request, response) => response.end('served'));
  port = (early.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => early.server.close(resolve));
});

/** Sends raw bytes, returns all that comes back until the server closes the connection. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(request));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

describe('requests the HTTP parser refuses', () => {
  it('headers over the limit (a 20 kB cookie) answer 431 with what to do, as text', async () => {
    const answer = await raw(`GET / HTTP/1.1\r\nHost: x\r\nCookie: a=${'b'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(answer).toContain('Content-Type: text/plain; charset=utf-8');
    expect(answer).toMatch(
      /\r\n\r\nThe request's headers are too large .*Clear this site's cookies and try again\.\n$/,
    );
  });

  it('a malformed request answers 400 saying it could not be read', async () => {
    const answer = await raw('NOT A REQUEST\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toMatch(/\r\n\r\nThe request could not be read\. Nothing was changed\.\n$/);
  });

  it('the server goes on serving', async () => {
    const answer = await raw('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/\r\n\r\nserved$/);
  });
});
