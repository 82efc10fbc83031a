import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandBus } from '#events/bus/command-bus.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import { eventCount, messageOf } from './support/helpers.ts';
import {
  METRICS_TOKEN,
  securityBackends,
  startSecuritySuite,
  type SecurityApp,
} from './support/security-app.ts';

/** The flash messages a redirect answer set (read from its cookie). */
function flashOf(response: Response): string {
  for (const line of response.headers.getSetCookie()) {
    const match = /^rivals_flash=([^.;]+)\./.exec(line);
    if (!match?.[1]) continue;
    const flashes = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8')) as { text: string }[];
    return flashes.map((f) => f.text).join(' | ');
  }
  return '';
}

/**
 * The bus methods /ops and its actions use, failing as a Redis outage makes them fail (each an own
 * property over the class's method), while `work` runs.
 */
async function withBusDown<T>(bus: CommandBus, work: () => Promise<T>): Promise<T> {
  const names = ['deadLetters', 'pendingCount', 'findDeadLetter', 'retryDeadLetter', 'discardDeadLetter'];
  const down = () => Promise.reject(new Error('Command timed out'));
  Object.assign(bus, Object.fromEntries(names.map((name) => [name, down])));
  try {
    return await work();
  } finally {
    for (const name of names) delete (bus as unknown as Record<string, unknown>)[name];
  }
}

/**
 * A review of the admin and operator surfaces (/ops, /metrics, /users) as an operator in trouble and an
 * admin whose change is not visible yet meet them.
 */
describe.each(securityBackends)('operator and admin surfaces on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;

  beforeAll(async () => ({ app, admin } = await startSecuritySuite(backend)));
  afterAll(() => app?.close());

  const deadLetter = async () => {
    const id = String(700_000_000 + Math.floor(Math.random() * 100_000_000));
    const letter = envelope(addCompetitorCommand(`Dead ${randomUUID().slice(0, 8)}`));
    await app.runtime.bus.deadLetter({ id, envelope: letter, deliveryCount: 5 }, 'handler threw: boom');
    return id;
  };

  it('/ops still shows the projections while the command bus does not answer, and says so', async () => {
    await withBusDown(app.runtime.bus, async () => {
      const page = await admin.get('/ops');
      expect(page.status).toBe(200);
      const text = await messageOf(page);
      expect(text).toContain('competitor-list');
      expect(text).toContain('The command bus did not answer');
      expect(text).not.toContain('None: every command was handled.');
    });
  });

  it('Retry / Discard while the command bus does not answer: 503 saying nothing was changed, nothing recorded', async () => {
    const id = await deadLetter();
    const before =
      (await eventCount(app, 'DeadLetterRetried')) + (await eventCount(app, 'DeadLetterDiscarded'));
    await admin.get('/ops');
    for (const action of ['retry', 'discard'] as const) {
      const answer = await withBusDown(app.runtime.bus, () =>
        admin.postForm(`/ops/dead-letters/${id}/${action}`, {}),
      );
      expect(answer.status, action).toBe(503);
      expect(await messageOf(answer), action).toMatch(/command bus did not answer.*nothing was changed/i);
    }
    expect(
      (await eventCount(app, 'DeadLetterRetried')) + (await eventCount(app, 'DeadLetterDiscarded')),
    ).toBe(before);
    expect((await app.runtime.bus.deadLetters()).some((d) => d.id === id)).toBe(true);
    await admin.get('/ops');
    expect(flashOf(await admin.postForm(`/ops/dead-letters/${id}/discard`, {}))).toBe(
      'Discarded the dead letter.',
    );
  });

  it('/ops and /metrics show changes accepted but not handled yet (the bus lost them, or no worker reads it)', async () => {
    // Admitted to the inbox, never put on the bus: what a Redis restart without persistence leaves
    // behind until a worker re-sends it, and what every change looks like while no worker runs.
    const letter = envelope(addCompetitorCommand(`Stuck ${randomUUID().slice(0, 8)}`));
    expect((await app.runtime.inbox.admit(letter)).kind).toBe('admitted');
    const text = await messageOf(await admin.get('/ops'));
    expect(text).toMatch(/Changes accepted, not handled yet [1-9]\d*, the oldest waiting \d+ s/);
    const metrics = await (
      await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^rivals_commands_unhandled [1-9]\d*$/m);
    expect(metrics).toMatch(/^rivals_commands_unhandled_oldest_seconds [\d.e+-]+$/m);
  });
});
