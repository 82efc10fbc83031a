import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandEnvelope } from '#events/command.ts';
import { createAccount } from '#services/user/accounts.ts';
import { flashOf } from '#tests/security/support/helpers.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope, giveUp } from '#tests/support/runtime-pieces.ts';
import { startTestApp, TEST_PASSWORD, type TestApp } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { until } from '#tests/support/until.ts';

/**
 * The fields of a dead letter's Retry or Discard form as /ops renders it for this client: what the
 * browser sends when the button is clicked and confirmed, and sends again when it retries the request.
 */
async function formOf(client: TestClient, id: string, action: 'retry' | 'discard') {
  const html = await (await client.get('/ops')).text();
  const form = new RegExp(`<form[^>]*action="/ops/dead-letters/${id}/${action}"[^>]*>(.*?)</form>`, 's').exec(
    html,
  )?.[1];
  if (form === undefined) throw new Error(`/ops shows no ${action} form for dead letter ${id}`);
  const fields: Record<string, string> = {};
  for (const input of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
    fields[input[1] ?? ''] = input[2] ?? '';
  return fields;
}

/**
 * A retry is normal: a dead letter's Retry or Discard on /ops sent again (the browser retrying after a
 * lost answer, or a second click that got through) answers what the first sending did, and re-delivers
 * nothing and records nothing a second time. Two admins acting on the same letter from two tabs: the
 * second is told what the first did.
 */
describe.each(databaseBackends)('dead-letter actions sent again on %s', (backend) => {
  let app: TestApp;
  let admin: TestClient;
  let other: TestClient;
  /** The command ids the app sent on the bus, in order. */
  const sent: string[] = [];

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    admin = await app.client('admin');
    // A second admin, for the two-tabs cases.
    const email = `second-admin-${randomUUID().slice(0, 6)}@rivals.test`;
    const { userId, outcome } = await createAccount(
      app.db.pool,
      (command) => app.runtime.route(envelope(command)),
      { email, displayName: 'Second admin', role: 'admin', password: TEST_PASSWORD },
    );
    expect(outcome?.status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    await until(
      async () =>
        (await app.db.pool.query('SELECT 1 FROM user_list WHERE id = $1', [userId])).rows.length > 0,
      'the second admin in the user list',
    );
    other = new TestClient(app.url);
    await other.signIn(email, TEST_PASSWORD);
    const bus = app.runtime.bus;
    const send = bus.send.bind(bus);
    bus.send = (letter) => {
      sent.push(letter.commandId);
      return send(letter);
    };
  });
  afterAll(async () => app?.close());

  const deadLetter = async () => {
    const letter = envelope(addCompetitorCommand(`Dead ${randomUUID().slice(0, 8)}`));
    return { letter, id: await giveUp(app.runtime, letter) };
  };
  const sends = (letter: CommandEnvelope) => sent.filter((id) => id === letter.commandId).length;
  const recorded = async (letter: CommandEnvelope) => {
    const { rows } = await app.db.pool.query<{ type: string }>(
      `SELECT type FROM events WHERE type IN ('DeadLetterRetried', 'DeadLetterDiscarded')
         AND data->>'commandId' = $1 ORDER BY position`,
      [letter.commandId],
    );
    return rows.map((r) => r.type);
  };
  const handled = async (letter: CommandEnvelope) => {
    const { rows } = await app.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE command_id = $1 AND type = 'CompetitorAdded'`,
      [letter.commandId],
    );
    return rows[0]?.n ?? 0;
  };

  it('Retry sent again after its answer was lost: the first answer, one re-delivery, one audit event', async () => {
    const { letter, id } = await deadLetter();
    const form = await formOf(admin, id, 'retry');
    const first = await admin.postForm(`/ops/dead-letters/${id}/retry`, form);
    const again = await admin.postForm(`/ops/dead-letters/${id}/retry`, form);
    expect([first.status, again.status]).toEqual([302, 302]);
    expect(again.headers.get('location')).toBe('/ops');
    expect(flashOf(first)).toBe('Sent AddCompetitor to the workers again.');
    expect(flashOf(again)).toBe(flashOf(first));
    await until(async () => (await handled(letter)) === 1, 'the retried command to be handled');
    expect(sends(letter)).toBe(1);
    expect(await recorded(letter)).toEqual(['DeadLetterRetried']);
    expect(await handled(letter)).toBe(1);
    // The page's key is a fresh one per rendered form: the Retry form shown now is a new click.
    expect(form._idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('Discard sent again after its answer was lost: the first answer, one audit event, never handled', async () => {
    const { letter, id } = await deadLetter();
    const form = await formOf(admin, id, 'discard');
    const first = await admin.postForm(`/ops/dead-letters/${id}/discard`, form);
    const again = await admin.postForm(`/ops/dead-letters/${id}/discard`, form);
    expect([first.status, again.status]).toEqual([302, 302]);
    expect(flashOf(first)).toBe('Discarded the dead letter.');
    expect(flashOf(again)).toBe(flashOf(first));
    expect(await recorded(letter)).toEqual(['DeadLetterDiscarded']);
    expect(sends(letter)).toBe(0);
    expect(await app.runtime.deadLetters.find(id)).toBeUndefined();
  });

  it('the same Retry sent twice at once (the browser retrying while the first is still answered): one re-delivery, the same answer', async () => {
    const { letter, id } = await deadLetter();
    const form = await formOf(admin, id, 'retry');
    const answers = await Promise.all([
      admin.postForm(`/ops/dead-letters/${id}/retry`, form),
      admin.postForm(`/ops/dead-letters/${id}/retry`, form),
    ]);
    expect(answers.map((a) => a.status)).toEqual([302, 302]);
    expect(answers.map(flashOf)).toEqual([
      'Sent AddCompetitor to the workers again.',
      'Sent AddCompetitor to the workers again.',
    ]);
    await until(async () => (await handled(letter)) === 1, 'the retried command to be handled');
    expect(sends(letter)).toBe(1);
    expect(await recorded(letter)).toEqual(['DeadLetterRetried']);
  });

  it('a Retry whose carrying out failed, sent again: the resend finishes it and says it was sent', async () => {
    const { letter, id } = await deadLetter();
    const form = await formOf(admin, id, 'retry');
    const letters = app.runtime.deadLetters;
    const retry = letters.retry.bind(letters);
    letters.retry = () => Promise.reject(new Error('Connection terminated unexpectedly'));
    let first;
    try {
      first = await admin.postForm(`/ops/dead-letters/${id}/retry`, form);
    } finally {
      letters.retry = retry;
    }
    expect(flashOf(first)).toBe(
      'The retry is recorded, but the database did not answer. Click Retry again to finish it.',
    );
    const again = await admin.postForm(`/ops/dead-letters/${id}/retry`, form);
    expect(flashOf(again)).toBe('Sent AddCompetitor to the workers again.');
    await until(async () => (await handled(letter)) === 1, 'the retried command to be handled');
    expect(sends(letter)).toBe(1);
    expect(await recorded(letter)).toEqual(['DeadLetterRetried']);
  });

  it('Retry from a tab opened before another admin discarded the letter: told it was discarded, and by whom; nothing sent', async () => {
    const { letter, id } = await deadLetter();
    const retryForm = await formOf(admin, id, 'retry');
    const discardForm = await formOf(other, id, 'discard');
    expect(flashOf(await other.postForm(`/ops/dead-letters/${id}/discard`, discardForm))).toBe(
      'Discarded the dead letter.',
    );
    const late = await admin.postForm(`/ops/dead-letters/${id}/retry`, retryForm);
    expect(late.status).toBe(302);
    expect(flashOf(late)).toBe(
      'That dead letter was already discarded by Second admin, so it was not retried.',
    );
    expect(await recorded(letter)).toEqual(['DeadLetterDiscarded']);
    expect(sends(letter)).toBe(0);
  });

  it("a late click carrying another letter's key is not told that letter's fate, and a malformed key is refused", async () => {
    const [a, b] = [await deadLetter(), await deadLetter()];
    const formA = await formOf(admin, a.id, 'retry');
    const formB = await formOf(admin, b.id, 'discard');
    expect(flashOf(await other.postForm(`/ops/dead-letters/${b.id}/discard`, formB))).toBe(
      'Discarded the dead letter.',
    );
    expect(
      flashOf(
        await other.postForm(`/ops/dead-letters/${a.id}/discard`, await formOf(other, a.id, 'discard')),
      ),
    ).toBe('Discarded the dead letter.');
    // Letter a's late Retry with letter b's key: b's record does not name a, so nothing is claimed about a.
    const crossed = await admin.postForm(`/ops/dead-letters/${a.id}/retry`, {
      ...formA,
      letter: formB.letter ?? '',
    });
    expect(flashOf(crossed)).toBe('That dead letter was already retried or discarded.');
    const malformed = await admin.postForm(`/ops/dead-letters/${a.id}/retry`, { ...formA, letter: 'x' });
    expect(malformed.status).toBe(400);
    expect(await malformed.text()).toContain('This form is out of date: reload /ops and try again.');
    expect(await recorded(a.letter)).toEqual(['DeadLetterDiscarded']);
    expect(sends(a.letter)).toBe(0);
  });

  it('Discard from a tab opened before another admin retried the letter: told it was retried, and by whom; still handled once', async () => {
    const { letter, id } = await deadLetter();
    const discardForm = await formOf(other, id, 'discard');
    const retryForm = await formOf(admin, id, 'retry');
    expect(flashOf(await admin.postForm(`/ops/dead-letters/${id}/retry`, retryForm))).toBe(
      'Sent AddCompetitor to the workers again.',
    );
    const late = await other.postForm(`/ops/dead-letters/${id}/discard`, discardForm);
    expect(late.status).toBe(302);
    expect(flashOf(late)).toBe(
      'That dead letter was already retried by Test admin, so it was not discarded.',
    );
    await until(async () => (await handled(letter)) === 1, 'the retried command to be handled');
    expect(await recorded(letter)).toEqual(['DeadLetterRetried']);
    expect(sends(letter)).toBe(1);
  });

  it('Retry and Discard by two admins at once: one action, and the other is told which, by whom', async () => {
    const { letter, id } = await deadLetter();
    const retryForm = await formOf(admin, id, 'retry');
    const discardForm = await formOf(other, id, 'discard');
    const [retried, discarded] = await Promise.all([
      admin.postForm(`/ops/dead-letters/${id}/retry`, retryForm),
      other.postForm(`/ops/dead-letters/${id}/discard`, discardForm),
    ]);
    expect([retried.status, discarded.status]).toEqual([302, 302]);
    const actions = await recorded(letter);
    expect(actions).toHaveLength(1);
    if (actions[0] === 'DeadLetterRetried') {
      expect(flashOf(retried)).toBe('Sent AddCompetitor to the workers again.');
      expect(flashOf(discarded)).toBe(
        'That dead letter was already retried by Test admin, so it was not discarded.',
      );
      await until(async () => (await handled(letter)) === 1, 'the retried command to be handled');
      expect(sends(letter)).toBe(1);
    } else {
      expect(flashOf(discarded)).toBe('Discarded the dead letter.');
      expect(flashOf(retried)).toBe(
        'That dead letter was already discarded by Second admin, so it was not retried.',
      );
      expect(sends(letter)).toBe(0);
    }
  });

  it('signed out, not an admin, or without the form token: refused, with the key or without, and nothing is recorded', async () => {
    const { letter, id } = await deadLetter();
    const form = await formOf(admin, id, 'retry');
    const signedOut = new TestClient(app.url);
    await signedOut.get('/login');
    for (const csrf of [false, undefined] as const)
      expect([401, 403]).toContain(
        (await signedOut.postForm(`/ops/dead-letters/${id}/retry`, form, { csrf })).status,
      );
    const editor = await app.client('editor');
    await editor.get('/competitors');
    expect(
      (await editor.postForm(`/ops/dead-letters/${id}/retry`, { ...form, _csrf: editor.csrfToken })).status,
    ).toBe(403);
    const { _csrf: _token, ...withoutToken } = form;
    expect(
      (await admin.postForm(`/ops/dead-letters/${id}/discard`, withoutToken, { csrf: false })).status,
    ).toBe(403);
    expect(await recorded(letter)).toEqual([]);
    expect(sends(letter)).toBe(0);
    expect(await app.runtime.deadLetters.find(id)).toBeDefined();
  });
});
