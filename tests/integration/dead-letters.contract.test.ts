import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BusEnvelope } from '#events/command-shape.ts';
import type { CommandEnvelope } from '#events/command.ts';
import { CommandInbox } from '#events/store/command-inbox.ts';
import { DeadLetterStore, type NewDeadLetter } from '#events/store/dead-letters.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { createTestDatabase, type TestDatabase } from '#tests/support/test-database.ts';

/**
 * The dead letters live in the database (both backends): what the workers gave up on survives any
 * restart of the bus, one failing command is one letter, a retry puts the command back in the inbox in
 * the same statement that takes the letter out, and any text a bus entry held can be stored and shown.
 */
describe.each(databaseBackends)('dead letters on %s', (backend) => {
  let db: TestDatabase;
  let letters: DeadLetterStore;
  let inbox: CommandInbox;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    letters = new DeadLetterStore(db.pool);
    inbox = new CommandInbox(db.pool);
  });
  afterAll(async () => db?.drop());
  beforeEach(async () => {
    await db.pool.query('TRUNCATE dead_letters');
  });

  const command = (name = `Dead ${randomUUID().slice(0, 8)}`): CommandEnvelope =>
    envelope(addCompetitorCommand(name));
  const given = (
    letter: BusEnvelope | CommandEnvelope,
    more: Partial<NewDeadLetter> = {},
  ): NewDeadLetter => ({
    busEntryId: `${Date.now()}-0`,
    envelope: letter,
    error: 'handler threw: boom',
    deliveryCount: 5,
    ...more,
  });
  const inboxRow = async (commandId: string) =>
    (
      await db.pool.query<{ settled: boolean; waited: number }>(
        `SELECT settled_at IS NOT NULL AS settled, extract(epoch FROM now() - accepted_at)::float8 AS waited
         FROM command_inbox WHERE command_id = $1`,
        [commandId],
      )
    ).rows[0];

  it('lists the newest letters oldest first, counts them all, and finds one by id', async () => {
    const sent = [command(), command(), command()];
    for (const letter of sent) await letters.add(given(letter));
    const all = await letters.list();
    expect(all.map((d) => d.envelope)).toEqual(sent);
    expect(all[0]).toMatchObject({ error: 'handler threw: boom', deliveryCount: 5 });
    expect((await letters.list(2)).map((d) => d.envelope)).toEqual(sent.slice(1));
    expect(await letters.list(0)).toEqual([]);
    expect(await letters.count()).toBe(3);
    expect(await letters.find(all[1]!.id)).toEqual(all[1]);
    expect(await letters.find('999999999')).toBeUndefined();
  });

  it('one failing command is one letter: given up on again (a crash before the ack), it is updated', async () => {
    const letter = command();
    await letters.add(given(letter, { busEntryId: '1-0', error: 'first', deliveryCount: 5 }));
    const [first] = await letters.list();
    await letters.add(given(letter, { busEntryId: '2-0', error: 'second', deliveryCount: 6 }));
    expect(await letters.list()).toEqual([{ ...first, error: 'second', deliveryCount: 6 }]);
  });

  it('retry takes the letter out and puts its command back in the inbox, accepted now; of two at once, one does', async () => {
    const letter = command();
    expect((await inbox.admit(letter)).kind).toBe('admitted');
    await inbox.settle([letter.commandId]);
    await db.pool.query(
      `UPDATE command_inbox SET accepted_at = now() - interval '7 days' WHERE command_id = $1`,
      [letter.commandId],
    );
    await letters.add(given(letter));
    const [stored] = await letters.list();

    const both = await Promise.all([letters.retry(stored!.id), letters.retry(stored!.id)]);
    expect(both.filter(Boolean)).toEqual([stored]);
    expect(await letters.find(stored!.id)).toBeUndefined();
    // In flight again, waiting since the retry (not a week): the sweeper sends it if nobody else does.
    const row = await inboxRow(letter.commandId);
    expect(row?.settled).toBe(false);
    expect(row?.waited).toBeLessThan(60);
    expect(await letters.retry(stored!.id)).toBeUndefined();
  });

  it('giving up settles the command in the inbox in the same statement, so a Retry right after stays in flight', async () => {
    const letter = command();
    expect((await inbox.admit(letter)).kind).toBe('admitted');
    await letters.add(given(letter));
    expect(await inboxRow(letter.commandId)).toMatchObject({ settled: true });
    const [stored] = await letters.list();
    await letters.retry(stored!.id);
    // Before, the worker settled given-up commands at the end of its batch: a Retry between the two was
    // settled again, and a lost send then lost the command.
    expect(await inboxRow(letter.commandId)).toMatchObject({ settled: false });
  });

  it('a command that failed its full parse is settled too, so the sweeper does not send it again and again', async () => {
    const letter = command();
    expect((await inbox.admit(letter)).kind).toBe('admitted');
    await letters.add({
      busEntryId: '1-0',
      envelope: null,
      raw: JSON.stringify(letter),
      error: 'not a valid command envelope',
      deliveryCount: 1,
      commandId: letter.commandId,
    });
    expect(await inboxRow(letter.commandId)).toMatchObject({ settled: true });
    expect((await inbox.takeStale(-1_000, 100)).map((e) => e.commandId)).not.toContain(letter.commandId);
  });

  it('retry of a command the inbox never had admits it there, so it is not lost either', async () => {
    const letter = command();
    await letters.add(given(letter));
    const [stored] = await letters.list();
    expect(await letters.retry(stored!.id)).toMatchObject({ envelope: letter });
    expect(await inboxRow(letter.commandId)).toMatchObject({ settled: false });
    expect((await inbox.takeStale(-1_000, 100)).map((e) => e.commandId)).toContain(letter.commandId);
  });

  it('discard takes the letter out for good, once', async () => {
    await letters.add(given(command()));
    const [stored] = await letters.list();
    const both = await Promise.all([letters.discard(stored!.id), letters.discard(stored!.id)]);
    expect(both.filter(Boolean)).toEqual([stored]);
    expect(await letters.count()).toBe(0);
  });

  it('keeps any text a bus entry held: NUL, broken characters, a very long entry, an error with NUL', async () => {
    const raw = `{"bad":"\u0000 \ud800 end"}`;
    await letters.add({
      busEntryId: '1-0',
      envelope: null,
      raw,
      error: 'not a valid command envelope',
      deliveryCount: 1,
    });
    await letters.add({
      busEntryId: '2-0',
      envelope: null,
      raw: 'x'.repeat(200_000),
      error: 'e',
      deliveryCount: 1,
    });
    await letters.add(given(command(), { error: 'driver said \u0000 here' }));
    const [withNul, long, withError] = await letters.list();
    expect(withNul).toMatchObject({ envelope: null, raw });
    expect(long?.raw).toHaveLength(65_536);
    expect(withError?.error).toBe('driver said \ufffd here');
    await expect(letters.retry(withNul!.id)).rejects.toThrow('not a valid command; discard it instead');
    expect(await letters.discard(withNul!.id)).toMatchObject({ raw });
  });

  it('a command whose text the inbox cannot store (a NUL: it never came through the inbox) is kept as text, to discard', async () => {
    const letter = command();
    const unstorable = { ...letter, command: { ...letter.command, payload: { name: 'a\u0000b' } } };
    await letters.add(given(unstorable));
    const [stored] = await letters.list();
    expect(stored).toMatchObject({ envelope: null, raw: JSON.stringify(unstorable) });
    await expect(letters.retry(stored!.id)).rejects.toThrow('discard it instead');
    // A note that merely says "\u0000" in words is a command like any other.
    const words = {
      ...letter,
      commandId: randomUUID(),
      command: { ...letter.command, payload: { name: 'a\\u0000b' } },
    };
    await letters.add(given(words));
    expect((await letters.list()).at(-1)?.envelope).toEqual(words);
  });
});
