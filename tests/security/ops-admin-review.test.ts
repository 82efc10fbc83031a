import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandBus } from '#events/bus/command-bus.ts';
import { loadConfig } from '#infra/config.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { startRuntime } from '#web/runtime.server.ts';
import { backendUrl } from '#tests/support/environment.ts';
import { createTestDatabase } from '#tests/support/test-database.ts';
import { addCompetitorCommand, envelope, giveUp, silentLog } from '#tests/support/runtime-pieces.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import {
  addCompetitorByForm,
  eventCount,
  flashOf,
  freshUser,
  messageOf,
  waitFor,
} from './support/helpers.ts';
import {
  METRICS_TOKEN,
  securityBackends,
  startSecuritySuite,
  type SecurityApp,
} from './support/security-app.ts';

/**
 * The bus methods /ops and its actions use, failing as a Redis outage makes them fail (each an own
 * property over the class's method), while `work` runs.
 */
async function withBusDown<T>(bus: CommandBus, work: () => Promise<T>): Promise<T> {
  const names = ['pendingCount', 'send'];
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

  const deadLetter = () =>
    giveUp(app.runtime, envelope(addCompetitorCommand(`Dead ${randomUUID().slice(0, 8)}`)));
  /** A change accepted, then given up on: as a worker leaves it (dead-lettered, settled in the inbox). */
  const givenUpChange = async (name: string) => {
    const command = addCompetitorCommand(`${name} ${randomUUID().slice(0, 8)}`);
    const letter = envelope(command);
    expect((await app.runtime.inbox.admit(letter)).kind).toBe('admitted');
    const id = await giveUp(app.runtime, letter);
    await app.runtime.inbox.settle([letter.commandId]);
    const listed = async () =>
      (await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [command.payload.competitorId]))
        .rows.length === 1;
    return { id, listed };
  };

  it('/ops still shows the projections and the dead letters while the command bus does not answer, and says so', async () => {
    const id = await deadLetter();
    await withBusDown(app.runtime.bus, async () => {
      const page = await admin.get('/ops');
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('competitor-list');
      expect(html).toContain('The command bus did not answer');
      // Dead letters are kept in the database: still listed, with their buttons.
      expect(html).toContain(`/ops/dead-letters/${id}/retry`);
    });
    await app.runtime.deadLetters.discard(id);
  });

  it('Retry and Discard work while the command bus does not answer; the retried change is handled once it answers', async () => {
    const retried = await givenUpChange('Retried in an outage');
    const discarded = await deadLetter();
    const before =
      (await eventCount(app, 'DeadLetterRetried')) + (await eventCount(app, 'DeadLetterDiscarded'));
    const bus = app.runtime.bus;
    await admin.get('/ops');
    const answers = await withBusDown(bus, async () => [
      await admin.postForm(`/ops/dead-letters/${retried.id}/retry`, {}),
      await admin.postForm(`/ops/dead-letters/${discarded}/discard`, {}),
    ]);
    expect(answers.map((a) => a.status)).toEqual([302, 302]);
    expect(answers.map(flashOf)).toEqual([
      'AddCompetitor is back in the queue. The command bus did not answer, so a worker sends it as soon as it does.',
      'Discarded the dead letter.',
    ]);
    expect(
      (await eventCount(app, 'DeadLetterRetried')) + (await eventCount(app, 'DeadLetterDiscarded')),
    ).toBe(before + 2);
    expect(await app.runtime.deadLetters.find(retried.id)).toBeUndefined();
    expect(await app.runtime.deadLetters.find(discarded)).toBeUndefined();
    // Back in the inbox: a worker's sweeper sends it once the bus answers again.
    await waitFor(retried.listed, 'the retried change to be handled once the bus answers', 30_000);
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

  it('/ops and /metrics say how many dead letters there are when more than the page lists', async () => {
    const letters = app.runtime.deadLetters;
    const ids: string[] = [];
    try {
      for (let i = 0; i < 55; i++) ids.push(await deadLetter());
      const total = await letters.count();
      expect(total).toBeGreaterThanOrEqual(55);
      const page = await admin.get('/ops');
      const text = await messageOf(page);
      expect(text).toContain(`The newest 50 of ${total} dead letters are listed`);
      const metrics = await (
        await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })
      ).text();
      expect(metrics).toMatch(new RegExp(`^rivals_dead_letters ${total}$`, 'm'));
    } finally {
      for (const id of ids) await letters.discard(id);
    }
  });

  it('an admin who makes themselves an editor lands on a page they may see, told what happened', async () => {
    // Another admin stays (the test admin), so the change is allowed; the form is offered on one's own row.
    const self = await freshUser(app, 'admin', 'self-demoting');
    await self.client.get('/users');
    const demoted = await self.client.postForm(`/users/${self.id}/role`, {
      role: 'editor',
      _idempotency_key: randomUUID(),
    });
    expect(demoted.status).toBe(302);
    expect(flashOf(demoted)).toBe('Throwaway self-demoting is now editor.');
    const location = demoted.headers.get('location') ?? '';
    const landing = await self.client.get(location);
    expect(landing.status, location).toBe(200);
    expect(await messageOf(landing)).toContain('Throwaway self-demoting is now editor.');
    // Another admin's demotion still returns to the users list.
    await admin.get('/users');
    const other = await freshUser(app, 'admin', 'demoted-by-admin');
    const answer = await admin.postForm(`/users/${other.id}/role`, {
      role: 'viewer',
      _idempotency_key: randomUUID(),
    });
    expect(answer.headers.get('location')).toBe('/users');
  });

  it('/metrics does not repeat the last figures when it cannot read them: lag left out, counts NaN', async () => {
    const scrape = async () =>
      (await fetch(`${app.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    const known = (metrics: string) =>
      /^rivals_projection_lag_events\{/m.test(metrics) &&
      /^rivals_commands_unhandled \d/m.test(metrics) &&
      /^rivals_dead_letters \d/m.test(metrics);
    expect(known(await scrape())).toBe(true);
    // The database and the bus stop answering: the lag, backlog and dead-letter figures are unknown now.
    const pool = app.db.pool as unknown as { query: (...args: unknown[]) => Promise<unknown> };
    const query = pool.query;
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    pool.query = () => Promise.reject(down);
    try {
      const metrics = await withBusDown(app.runtime.bus, scrape);
      expect(metrics).not.toMatch(/^rivals_projection_lag_(events|seconds)\{/m);
      expect(metrics).toMatch(/^rivals_commands_unhandled nan$/im);
      expect(metrics).toMatch(/^rivals_commands_unhandled_oldest_seconds nan$/im);
      expect(metrics).toMatch(/^rivals_dead_letters nan$/im);
    } finally {
      pool.query = query;
    }
    expect(known(await scrape())).toBe(true);
  });

  it('a retried dead letter that the bus then loses is sent again from the inbox, not lost', async () => {
    const { id, listed } = await givenUpChange('Retried');
    // The bus takes the re-sent command, then loses it: Redis restarting without persistence before a
    // worker read it (all workers down meanwhile), or the embedded bus's process dying.
    const bus = app.runtime.bus;
    Object.assign(bus, { send: async () => '1-0' });
    try {
      await admin.get('/ops');
      const retried = await admin.postForm(`/ops/dead-letters/${id}/retry`, {});
      expect(flashOf(retried)).toBe('Sent AddCompetitor to the workers again.');
    } finally {
      delete (bus as unknown as Record<string, unknown>).send;
    }
    // The operator was told it was sent: it is accepted again, so the workers re-send it and handle it.
    await waitFor(listed, 'the retried change to be re-sent from the inbox and handled', 30_000);
  });

  it('an admin cannot disable their own account, even by a hand-made request', async () => {
    const self = await freshUser(app, 'admin', 'self-disabling');
    await self.client.get('/users');
    const before = await eventCount(app, 'UserDisabled');
    const answer = await self.client.postForm(`/users/${self.id}/disable`, {
      _idempotency_key: randomUUID(),
    });
    expect(answer.status).toBe(400);
    expect(await messageOf(answer)).toContain(
      'You cannot disable your own account. Ask another admin to do it.',
    );
    expect(await eventCount(app, 'UserDisabled')).toBe(before);
    expect((await self.client.get('/users')).status).toBe(200);
  });

  describe('while the user list is behind the log', () => {
    /** Runs `work` with the projections stopped, so no change becomes visible within the wait. */
    async function withProjectionsStopped<T>(work: () => Promise<T>): Promise<T> {
      const runner = app.runtime.runner;
      if (!runner) throw new Error('the security app runs its projections');
      await runner.stop();
      try {
        return await work();
      } finally {
        await runner.start();
      }
    }

    it('adding a user does not say they can sign in before sign-in knows them', async () => {
      const email = `lagging-${randomUUID().slice(0, 6)}@rivals.test`;
      await admin.get('/users/new');
      await withProjectionsStopped(async () => {
        const added = await admin.postForm('/users', {
          email,
          displayName: 'Lagging User',
          role: 'viewer',
          password: TEST_PASSWORD,
          _idempotency_key: randomUUID(),
        });
        expect(added.status).toBe(302);
        const told = flashOf(added);
        // What is true right now: the new user cannot sign in yet.
        const newcomer = new TestClient(app.url);
        await newcomer.get('/login');
        expect((await newcomer.postForm('/login', { email, password: TEST_PASSWORD })).status).not.toBe(302);
        expect(told).not.toContain('can now sign in');
        expect(told).toMatch(/Lagging User is added as viewer.*in a moment/);
      });
    });

    it('a role change or a disable that the list does not show yet says it is saved, not that the list shows it', async () => {
      await admin.get('/users');
      const { viewer } = app.userIds;
      await withProjectionsStopped(async () => {
        const changed = await admin.postForm(`/users/${viewer}/role`, {
          role: 'editor',
          _idempotency_key: randomUUID(),
        });
        expect(flashOf(changed)).toBe(
          'Test viewer is now editor. It is saved; the list will show it in a moment.',
        );
        const disabled = await admin.postForm(`/users/${viewer}/disable`, { _idempotency_key: randomUUID() });
        expect(flashOf(disabled)).toBe(
          'Test viewer is disabled. It is saved; the list will show it in a moment.',
        );
        const enabled = await admin.postForm(`/users/${viewer}/enable`, { _idempotency_key: randomUUID() });
        expect(flashOf(enabled)).toBe(
          'Test viewer is enabled. It is saved; the list will show it in a moment.',
        );
      });
      // Caught up, the same answers say only what happened.
      const back = await admin.postForm(`/users/${viewer}/role`, {
        role: 'viewer',
        _idempotency_key: randomUUID(),
      });
      expect(flashOf(back)).toBe('Test viewer is now viewer.');
    });

    it('a delete or a move button that the list does not show yet says it is saved, not done', async () => {
      const name = `Lagging delete ${randomUUID().slice(0, 6)}`;
      const id = await addCompetitorByForm(admin, name);
      await waitFor(
        async () =>
          (await app.db.pool.query('SELECT 1 FROM competitor_list WHERE id = $1', [id])).rows.length === 1,
        'the new competitor to be listed',
      );
      const ranking = await (await admin.get('/ranking')).text();
      const version = /name="expect" value="(\d+)"/.exec(ranking)?.[1];
      const move = /value="([a-z0-9-]+:down)"/.exec(ranking)?.[1];
      expect(version && move, 'the ranking offers move buttons').toBeTruthy();
      await withProjectionsStopped(async () => {
        const moved = await admin.postForm('/ranking/move', {
          move: move ?? '',
          expect: version ?? '',
          _idempotency_key: randomUUID(),
        });
        expect(flashOf(moved)).toMatch(/^Moved .+\. It is saved; the list will show it in a moment\.$/);
        const deleted = await admin.postForm(`/competitors/${id}/delete`, {
          _idempotency_key: randomUUID(),
        });
        expect(flashOf(deleted)).toBe(`${name} was deleted. It is saved; the list will show it in a moment.`);
      });
    });
  });
});

describe.each(securityBackends)('a change that keeps failing, on %s', (backend) => {
  it('is listed once in the dead letters, not once per copy the inbox sweeper re-sent meanwhile', async () => {
    const db = await createTestDatabase(backend === 'embedded' ? 'embedded' : 'postgres', { poolSize: 5 });
    const prefix = `test-failing-${randomUUID().slice(0, 8)}:`;
    // The defaults' proportions, faster: the bus redelivers a failed command after 600 ms (30 s), the
    // sweeper re-sends what the inbox holds unsettled after 200 ms (10 s).
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      SESSION_SECRET: 's'.repeat(40),
      INBOX_RESEND_AFTER_MS: '200',
      ...(backend === 'postgres+redis'
        ? { DATABASE_URL: db.url, REDIS_URL: backendUrl('redis'), REDIS_PREFIX: prefix }
        : {}),
    });
    const runtime = await startRuntime(config, silentLog, {
      purpose: 'failing change',
      db,
      claimIdleMs: 600,
    });
    try {
      await bootstrapContent(runtime.store, runtime.route, { demoData: false });
      const commandId = randomUUID();
      const store = runtime.store;
      const append = store.append.bind(store);
      store.append = (stream, events, version, id, metadata) =>
        id === commandId
          ? Promise.reject(new Error('handler threw: boom'))
          : append(stream, events, version, id, metadata);
      const sent = await runtime.gateway.dispatch(
        addCompetitorCommand(`Failing ${randomUUID().slice(0, 8)}`),
        { id: 'someone', name: 'Someone' },
        { commandId, timeoutMs: 100 },
      );
      expect(sent.outcome).toBeUndefined();
      const letters = async () =>
        (await runtime.deadLetters.list(1_000)).filter((d) => d.envelope?.commandId === commandId).length;
      await waitFor(async () => (await letters()) > 0, 'the change to reach the dead letters', 30_000);
      // Long enough for every copy on the bus to fail its five deliveries too.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(await letters()).toBe(1);
    } finally {
      await runtime.close();
      if (runtime.redis) {
        const keys = await runtime.redis.keys(`${prefix}*`).catch(() => [] as string[]);
        if (keys.length > 0) await runtime.redis.del(...keys).catch(() => undefined);
      }
      await db.drop();
    }
  });
});
