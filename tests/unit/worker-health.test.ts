import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Config } from '#infra/config.ts';
import { createLogger } from '#infra/logger.ts';
import { createMetrics } from '#infra/metrics.ts';
import { startWorkerHealth } from '#web/worker-health.server.ts';

/**
 * A worker's health port (ROLE=worker) answers /metrics as the web's does. A scrape without the token
 * was answered by Koa's default error handler: a bare "Unauthorized" without the message or the
 * `WWW-Authenticate` header RFC 9110 requires on a 401 (Koa drops the headers set before the throw), and
 * a stack trace printed to standard error for every such request: anyone who could reach the port could
 * fill the worker's log with them (helper-66).
 */
const TOKEN = 'a-metrics-token-of-32-characters';
let server: Server;
let url: string;
let logged = '';

beforeAll(async () => {
  const output = new PassThrough();
  output.on('data', (d: Buffer) => (logged += d.toString()));
  const config = { PORT: 0, HOST: '127.0.0.1', METRICS_TOKEN: TOKEN } as Config;
  // A request without the token reaches nothing but the configuration.
  const unused = {} as never;
  server = await startWorkerHealth(
    {
      config,
      log: createLogger('info', output),
      db: unused,
      redis: unused,
      inbox: unused,
      deadLetters: unused,
      readiness: unused,
    },
    createMetrics(),
  );
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

it("a worker's /metrics without the token answers 401 with its WWW-Authenticate and words, printing no stack trace", async () => {
  const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    for (const authorization of ['', 'Bearer wrong-token', `Basic ${TOKEN}`]) {
      const answer = await fetch(`${url}/metrics`, { headers: { Authorization: authorization } });
      expect(answer.status, authorization).toBe(401);
      expect(answer.headers.get('www-authenticate'), authorization).toBe('Bearer realm="metrics"');
      expect(answer.headers.get('cache-control'), authorization).toBe('no-store');
      expect(await answer.text(), authorization).toContain(
        'Metrics need the operator token: Authorization: Bearer <METRICS_TOKEN>.',
      );
    }
    expect(printed).not.toHaveBeenCalled();
    // A refused scrape is not a fault of the worker: nothing in its log either.
    expect(logged).toBe('');
  } finally {
    printed.mockRestore();
  }
});
