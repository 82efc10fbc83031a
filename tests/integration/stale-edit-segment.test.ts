import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderingStream } from '#events/streams.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { addCompetitorCommand, envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import { readBoard } from '#tests/support/segment-board.ts';

/**
 * A competitor's segment has two editors: its edit form and the board. Board moves live in the ordering
 * stream, so an edit form opened before a move must not put the competitor back when it is saved
 * (decision 0013), and a segment change made in the form must make board drops based on the older board
 * stale, like any other move.
 */

type Answer = { status?: string; message?: string };

describe.each(databaseBackends)('segment changes from the edit form and the board on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;

  const board = () => readBoard(editor);

  const segmentOf = async (id: string) => (await board()).groups.find((g) => g.items.includes(id))?.id;

  /** The edit form as the browser would submit it untouched: every field, hidden ones included. */
  async function openEditForm(id: string): Promise<Record<string, string>> {
    const html = await (await editor.get(`/competitors/${id}/edit`)).text();
    const value = (name: string) =>
      new RegExp(`name="${name}"[^>]*value="([^"]*)"|value="([^"]*)"[^>]*name="${name}"`).exec(html);
    const pick = (name: string) => {
      const m = value(name);
      return m?.[1] ?? m?.[2] ?? '';
    };
    const selected = (name: string) =>
      new RegExp(`<select[^>]*name="${name}"[\\s\\S]*?<option[^>]*value="([^"]*)"[^>]*selected`).exec(
        html,
      )?.[1] ?? '';
    return {
      name: pick('name'),
      website: pick('website'),
      headquarters: pick('headquarters'),
      segmentId: selected('segmentId'),
      threat: selected('threat'),
      expectedVersion: pick('expectedVersion'),
      baseSegmentId: pick('baseSegmentId'),
      _idempotency_key: pick('_idempotency_key'),
    };
  }

  /** Moves `id` to the segment `to` by a board drop, as the page would send it. */
  async function dragOnBoard(id: string, to: string, basedOn?: Awaited<ReturnType<typeof board>>) {
    const now = basedOn ?? (await board());
    const groups = now.groups.map((g) => ({
      id: g.id,
      items: g.id === to ? [...g.items.filter((i) => i !== id), id] : g.items.filter((i) => i !== id),
    }));
    const response = await editor.postJson('/components/segments', {
      method: 'reorganize',
      payload: groups.map((g, i) => ({
        order: i + 1,
        value: g.id,
        items: g.items.map((value, j) => ({ order: j + 1, value })),
      })),
      expect: { version: now.version },
    });
    return { status: response.status, answer: (await response.json()) as Answer };
  }

  async function addCompetitor(name: string, segmentId: string) {
    const command = addCompetitorCommand(name, { segmentId });
    expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    const id = command.payload.competitorId;
    const deadline = Date.now() + 10_000;
    while ((await segmentOf(id)) === undefined && Date.now() < deadline) await sleep(20);
    return id;
  }

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
  });
  afterAll(async () => app?.close());

  it('an edit form opened before a board move, saved after it, keeps the move and saves the edit', async () => {
    const id = await addCompetitor('Stale Form Co', 'enterprise');
    const form = await openEditForm(id);
    expect(form).toMatchObject({ segmentId: 'enterprise', baseSegmentId: 'enterprise' });

    const moved = await dragOnBoard(id, 'emerging');
    expect([moved.status, moved.answer.status]).toEqual([200, 'accepted']);
    expect(await segmentOf(id)).toBe('emerging');

    const saved = await editor.postForm(`/competitors/${id}/edit`, { ...form, threat: 'high' });
    expect(saved.status).toBe(302);
    expect(await segmentOf(id)).toBe('emerging');
    const card = await (await editor.get(`/competitors/${id}`)).text();
    expect(card).toContain('Emerging');
    expect(card).toMatch(/high/i);
    const { events } = await app.runtime.store.readStream(orderingStream());
    expect(events.filter((e) => e.data && (e.data as { competitorId?: string }).competitorId === id)).toEqual(
      [expect.objectContaining({ type: 'CompetitorMovedToSegment' })],
    );
  });

  it('a segment the user changed in a stale form is applied, as a board move', async () => {
    const id = await addCompetitor('Chosen Segment Co', 'enterprise');
    const form = await openEditForm(id);
    expect((await dragOnBoard(id, 'emerging')).answer.status).toBe('accepted');

    const saved = await editor.postForm(`/competitors/${id}/edit`, { ...form, segmentId: 'smb' });
    expect(saved.status).toBe(302);
    expect(await segmentOf(id)).toBe('smb');
    const { events } = await app.runtime.store.readStream(orderingStream());
    expect(events.at(-1)).toMatchObject({
      type: 'CompetitorMovedToSegment',
      data: { competitorId: id, fromSegmentId: 'emerging', toSegmentId: 'smb' },
    });
  });

  it('an edit conflict shows the segment a board move gave it since, and saving keeps it there', async () => {
    const id = await addCompetitor('Moved Meanwhile Co', 'enterprise');
    const form = await openEditForm(id);
    const colleague = await app.client('admin');
    const theirs = await (await colleague.get(`/competitors/${id}/edit`)).text();
    const colleagueForm = {
      ...form,
      _idempotency_key: /name="_idempotency_key" value="([^"]*)"/.exec(theirs)?.[1] ?? '',
    };
    expect(
      (await colleague.postForm(`/competitors/${id}/edit`, { ...colleagueForm, threat: 'high' })).status,
    ).toBe(302);
    expect((await dragOnBoard(id, 'emerging')).answer.status).toBe('accepted');

    const refused = await editor.postForm(`/competitors/${id}/edit`, { ...form, threat: 'low' });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    // "Their other changes are taken in": the move too, and the form's base is where the card is now.
    expect(html).toMatch(/<select[^>]*name="segmentId"[\s\S]*?<option value="emerging" selected=""/);
    expect(html).toContain('name="baseSegmentId" value="emerging"');
    // Keep mine: the form as shown goes again, and the competitor stays where the board put it.
    const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
    const again = {
      ...form,
      threat: 'low',
      segmentId: 'emerging',
      ...Object.fromEntries(
        ['expectedVersion', 'baseSegmentId', '_idempotency_key'].map((n) => [n, hidden(n)]),
      ),
    };
    expect((await editor.postForm(`/competitors/${id}/edit`, again)).status).toBe(302);
    expect(await segmentOf(id)).toBe('emerging');
    expect(await (await editor.get(`/competitors/${id}`)).text()).toContain('badge--threat-low');
  });

  it('a board drop based on the board before an edit moved the competitor is refused, naming the move', async () => {
    const id = await addCompetitor('Edited Away Co', 'enterprise');
    const before = await board();
    const form = await openEditForm(id);
    const saved = await editor.postForm(`/competitors/${id}/edit`, { ...form, segmentId: 'mid-market' });
    expect(saved.status).toBe(302);
    expect(await segmentOf(id)).toBe('mid-market');

    // Someone drags another competitor on the board they loaded before the edit: it still shows `id`
    // in Enterprise, and accepting it would silently move `id` back.
    const other = await addCompetitor('Bystander Co', 'smb');
    const stale = {
      ...before,
      groups: before.groups.map((g) => (g.id === 'smb' ? { ...g, items: [...g.items, other] } : g)),
    };
    const drop = await dragOnBoard(other, 'emerging', stale);
    expect(drop.status).toBe(409);
    expect(drop.answer.message).toMatch(/moved Edited Away Co from Enterprise to Mid-market/i);
    expect(await segmentOf(id)).toBe('mid-market');
  });
});
