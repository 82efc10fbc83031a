import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competitorNameKey, competitorNameStream } from '#events/streams.ts';
import type { Command } from '#events/command.ts';
import { addCompetitorCommand, envelope, giveUp } from '#tests/support/runtime-pieces.ts';
import { TEST_PASSWORD } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';
import {
  addCompetitorByForm,
  competitorForm,
  eventCount,
  flashOf,
  freshUser,
  messageOf,
  waitFor,
} from './support/helpers.ts';
import { securityBackends, startSecuritySuite, type SecurityApp } from './support/security-app.ts';

/**
 * Two users' (or two tabs') changes racing on every state change the product offers, on both backends:
 * real HTTP requests sent at once. After each race the log and the read models must agree (the ranking
 * holds exactly the live competitors once each, names unique among them and held by them, note history
 * only for stored note changes), the loser hears why in words it can act on, the winner's "saved" is
 * stored, and the audit log holds exactly the events that happened.
 */
describe.each(securityBackends)('racing changes on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;
  let editor: TestClient;

  beforeAll(async () => ({ app, admin, editor } = await startSecuritySuite(backend)));
  afterAll(() => app?.close());

  const unique = (label: string) => `${label} ${randomUUID().slice(0, 8)}`;
  const query = async <T extends object>(sql: string, params: unknown[] = []) =>
    (await app.db.pool.query<T>(sql, params)).rows;

  /** What disagrees between the log and the read models; empty when they agree. */
  async function problems(): Promise<string[]> {
    const found: string[] = [];
    const added = await query<{ id: string }>(
      `SELECT data->>'competitorId' AS id FROM events WHERE type = 'CompetitorAdded'`,
    );
    const deleted = new Set(
      (
        await query<{ id: string }>(
          `SELECT data->>'competitorId' AS id FROM events WHERE type = 'CompetitorDeleted'`,
        )
      ).map((r) => r.id),
    );
    const live = new Set(added.map((r) => r.id).filter((id) => !deleted.has(id)));
    const rows = await query<{ id: string; name: string; rank: number }>(
      'SELECT id, name, rank FROM competitor_list ORDER BY rank, id',
    );
    const listed = new Set(rows.map((r) => r.id));
    for (const id of live) if (!listed.has(id)) found.push(`live ${id} missing from the list`);
    for (const id of listed) if (!live.has(id)) found.push(`${id} listed but not live`);
    const ranks = rows.map((r) => r.rank);
    if (ranks.some((rank, i) => rank !== i + 1)) found.push(`ranks are not 1..n: ${ranks.join(',')}`);
    const byKey = new Map<string, string[]>();
    for (const row of rows) {
      const key = competitorNameKey(row.name);
      byKey.set(key, [...(byKey.get(key) ?? []), row.id]);
    }
    for (const [key, ids] of byKey)
      if (ids.length > 1) found.push(`name “${key}” is live ${ids.length} times`);
    // Every live name is claimed by its competitor; every claimed name is held by a live competitor of it.
    const claims = await query<{ stream: string; type: string; holder: string }>(
      `SELECT DISTINCT ON (stream) stream, type, data->>'competitorId' AS holder
       FROM events WHERE stream LIKE 'competitor-name-%' ORDER BY stream, stream_version DESC`,
    );
    const claimOf = new Map(claims.map((c) => [c.stream, c]));
    for (const row of rows) {
      const claim = claimOf.get(competitorNameStream(row.name));
      if (claim?.type !== 'CompetitorNameClaimed' || claim.holder !== row.id)
        found.push(`the name “${row.name}” of ${row.id} is not claimed by it`);
    }
    const nameOf = new Map(rows.map((r) => [r.id, competitorNameStream(r.name)]));
    for (const claim of claims) {
      if (claim.type === 'CompetitorNameClaimed' && nameOf.get(claim.holder) !== claim.stream)
        found.push(`${claim.stream} is held by ${claim.holder}, which does not bear that name`);
    }
    const [history] = await query<{ n: number }>('SELECT count(*)::int AS n FROM note_history');
    const notes = await eventCount(app, 'CompetitorNoteUpdated');
    if (history?.n !== notes) found.push(`note history has ${history?.n} rows for ${notes} note changes`);
    const [audit] = await query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log');
    const [all] = await query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    if (audit?.n !== all?.n) found.push(`audit log has ${audit?.n} rows for ${all?.n} events`);
    return found;
  }

  /**
   * The log and the read models agree once the projections caught up. Given 30 s: a command retried from
   * a dead letter is handled by a worker after the answer, and on a loaded CI machine its events were
   * seen once still unprojected after 10 s (the answers and event counts were right).
   */
  async function expectConsistent() {
    await waitFor(
      async () => (await problems()).length === 0,
      'the read models to agree with the log',
      30_000,
    ).catch(() => undefined);
    expect(await problems()).toEqual([]);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  }

  const competitorRow = async (id: string) =>
    (
      await query<{ name: string; version: number; general: string; segment_id: string }>(
        'SELECT name, version, general, segment_id FROM competitor_list WHERE id = $1',
        [id],
      )
    )[0];

  /** The edit form's POST as the page rendered it (version and segment shown), with new fields. */
  async function edit(client: TestClient, id: string, name: string, version: number, segmentId = 'smb') {
    await client.get(`/competitors/${id}/edit`);
    return client.postForm(`/competitors/${id}/edit`, {
      ...competitorForm(name),
      segmentId,
      expectedVersion: String(version),
      baseSegmentId: 'smb',
    });
  }

  const remove = async (client: TestClient, id: string) => {
    await client.get('/competitors');
    return client.postForm(`/competitors/${id}/delete`, { _idempotency_key: randomUUID() });
  };

  const saveNote = (client: TestClient, competitorId: string, value: string, expectVersion?: number) =>
    client.postJson('/components/competitor-notes', {
      event: 'update-note',
      payload: { competitorId, column: 'general', value },
      ...(expectVersion === undefined ? {} : { expect: { version: expectVersion } }),
    });

  const addByForm = async (client: TestClient, name: string) => {
    await client.get('/competitors/new');
    return client.postForm('/competitors/new', competitorForm(name));
  };

  /** How many live competitors bear this name (as names compare: case, spacing, look-alikes). */
  const liveNamed = async (name: string) =>
    (await query<{ name: string }>('SELECT name FROM competitor_list')).filter(
      (r) => competitorNameKey(r.name) === competitorNameKey(name),
    ).length;

  const ranking = async () => {
    const rows = await query<{ id: string }>('SELECT id FROM competitor_list ORDER BY rank');
    const [order] = await query<{ version: number }>('SELECT version FROM competitor_list_order');
    return { ids: rows.map((r) => r.id), version: order?.version ?? 0 };
  };
  const items = (ids: readonly string[]) => ids.map((value, i) => ({ order: i + 1, value }));

  const reorder = (client: TestClient, ids: readonly string[], version: number) =>
    client.postJson('/components/ranking', {
      method: 'reorder',
      payload: items(ids),
      expect: { version },
    });

  const board = async () => {
    const segments = await query<{ id: string }>('SELECT id FROM segment_board ORDER BY position');
    const rows = await query<{ id: string; segment_id: string }>(
      'SELECT id, segment_id FROM competitor_list ORDER BY rank',
    );
    return segments.map((s) => ({
      id: s.id,
      members: rows.filter((r) => r.segment_id === s.id).map((r) => r.id),
    }));
  };
  const reorganize = (
    client: TestClient,
    groups: readonly { id: string; members: readonly string[] }[],
    version: number,
  ) =>
    client.postJson('/components/segments', {
      method: 'reorganize',
      payload: groups.map((g, i) => ({ order: i + 1, value: g.id, items: items(g.members) })),
      expect: { version },
    });

  // ───────────────────────────── competitors ─────────────────────────────

  it('two adds of the same name at once: one is added, the other is refused with a reason, never two', async () => {
    const other = (await freshUser(app, 'editor', 'adder')).client;
    for (let round = 0; round < 3; round++) {
      const name = unique('Twin');
      const answers = await Promise.all([addByForm(editor, name), addByForm(other, name.toUpperCase())]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([302, 409]);
      const loser = answers.find((a) => a.status === 409) as Response;
      expect(await messageOf(loser)).toMatch(/already exists/);
      expect(await liveNamed(name)).toBe(1);
    }
    await expectConsistent();
  });

  it('edit and delete of the same competitor at once: the delete wins or follows; both names are free after', async () => {
    for (let round = 0; round < 3; round++) {
      const oldName = unique('Doomed');
      const newName = unique('Renamed');
      const id = await addCompetitorByForm(editor, oldName);
      const version = (await competitorRow(id))?.version ?? 0;
      const [edited, deleted] = await Promise.all([edit(editor, id, newName, version), remove(admin, id)]);
      expect(deleted.status).toBe(302);
      expect(flashOf(deleted)).toMatch(/was deleted\./);
      if (edited.status !== 302) {
        expect([400, 404]).toContain(edited.status);
        expect(await messageOf(edited)).toMatch(/deleted/);
      }
      expect(await competitorRow(id)).toBeUndefined();
      // Neither name is left held by the deleted competitor.
      for (const name of [oldName, newName]) expect((await addByForm(editor, name)).status).toBe(302);
    }
    await expectConsistent();
  });

  it('two deletes of the same competitor at once: one CompetitorDeleted, both told it is gone', async () => {
    const second = (await freshUser(app, 'admin', 'deleter')).client;
    const id = await addCompetitorByForm(editor, unique('Twice deleted'));
    const before = await eventCount(app, 'CompetitorDeleted');
    const answers = await Promise.all([remove(admin, id), remove(second, id)]);
    for (const answer of answers) {
      expect(answer.status).toBe(302);
      expect(flashOf(answer)).toMatch(/deleted/);
    }
    expect(await eventCount(app, 'CompetitorDeleted')).toBe(before + 1);
    await expectConsistent();
  });

  it('delete and an add of the same name at once: never two live, the add either lands or says why', async () => {
    for (let round = 0; round < 3; round++) {
      const name = unique('Phoenix');
      const id = await addCompetitorByForm(editor, name);
      const [deleted, added] = await Promise.all([remove(admin, id), addByForm(editor, name)]);
      expect(deleted.status).toBe(302);
      if (added.status !== 302) {
        expect(added.status).toBe(409);
        expect(await messageOf(added)).toMatch(/already exists/);
        // Once the delete is answered, the name is free again.
        expect((await addByForm(editor, name)).status).toBe(302);
      }
      expect(await liveNamed(name)).toBe(1);
    }
    await expectConsistent();
  });

  it('two tabs rename a competitor to the same new name: it is saved once, and the name stays taken', async () => {
    const other = (await freshUser(app, 'editor', 'renamer')).client;
    for (let round = 0; round < 3; round++) {
      const id = await addCompetitorByForm(editor, unique('Original'));
      const version = (await competitorRow(id))?.version ?? 0;
      const name = unique('Same new name');
      const answers = await Promise.all([edit(editor, id, name, version), edit(other, id, name, version)]);
      // The same change from both: nothing to choose between, so the later one merges to it (decision 0021).
      expect(answers.map((a) => a.status)).toEqual([302, 302]);
      expect((await competitorRow(id))?.name).toBe(name);
      const copy = await addByForm(editor, name);
      expect(copy.status).toBe(409);
      expect(await messageOf(copy)).toMatch(/already exists/);
    }
    await expectConsistent();
  });

  it('a stale edit form that renames to the name another tab just saved merges to it and releases nothing', async () => {
    const id = await addCompetitorByForm(editor, unique('Stale base'));
    const version = (await competitorRow(id))?.version ?? 0;
    const name = unique('Taken by the first tab');
    expect((await edit(editor, id, name, version)).status).toBe(302);
    const stale = await edit(editor, id, name, version);
    expect(stale.status).toBe(302);
    expect((await addByForm(editor, name)).status).toBe(409);
    expect(await liveNamed(name)).toBe(1);
    await expectConsistent();
  });

  // Two workers (scaled mode) can decide two commands of one competitor side by side; one worker's lanes
  // run them one after another, so on the embedded backend this cannot happen.
  if (backend === 'postgres+redis')
    it('two workers renaming one competitor to the same name: the later merges to it, the name stays held', async () => {
      const id = await addCompetitorByForm(editor, unique('Two workers'));
      const version = (await competitorRow(id))?.version ?? 0;
      const name = unique('Shared new name');
      const rename = (): Command => ({
        type: 'UpdateCompetitor',
        payload: {
          competitorId: id,
          name,
          website: null,
          segmentId: 'smb',
          threat: 'low',
          headquarters: null,
          expectedVersion: version,
          baseSegmentId: 'smb',
        },
      });
      const [first, second] = [envelope(rename()), envelope(rename())];
      // The first worker claims the name, then stalls before its update; the second finds the name
      // claimed for this competitor and stores its update; the first then merges with it: the same name,
      // so nothing more is stored and no name is released.
      const store = app.runtime.store;
      const append = store.append.bind(store);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let reached!: () => void;
      const held = new Promise<void>((resolve) => (reached = resolve));
      store.append = async (stream, events, expected, commandId, metadata) => {
        if (stream === `competitor-${id}` && commandId === first.commandId) {
          reached();
          await released;
        }
        return append(stream, events, expected, commandId, metadata);
      };
      try {
        const stalled = app.runtime.route(first);
        await held;
        expect((await app.runtime.route(second)).status).toBe('accepted');
        release();
        const merged = await stalled;
        expect(merged).toMatchObject({ status: 'accepted', positions: [] });
      } finally {
        store.append = append;
        release();
      }
      await app.runtime.store.notifyAppended();
      await waitFor(async () => (await competitorRow(id))?.name === name, 'the rename in the list');
      const copy = await addByForm(editor, name);
      expect(copy.status).toBe(409);
      expect(await messageOf(copy)).toMatch(/already exists/);
      await expectConsistent();
    });

  it('an add redelivered after a crash midway is finished though its sender was disabled since: no name is stranded', async () => {
    const sender = await freshUser(app, 'editor', 'crashed');
    const name = unique('Crashed midway');
    const command = addCompetitorCommand(name);
    const id = command.payload.competitorId;
    const delivery = envelope(command, { actor: { id: sender.id, name: 'Crashed sender' } });
    // The worker claims the name, then dies before the add itself.
    const store = app.runtime.store;
    const append = store.append.bind(store);
    store.append = async (stream, ...rest) => {
      if (stream === `competitor-${id}`) throw new Error('the worker died here');
      return append(stream, ...rest);
    };
    try {
      await expect(app.runtime.route(delivery)).rejects.toThrow('the worker died here');
    } finally {
      store.append = append;
    }
    // Before the command is delivered again, the sender's account is disabled.
    await admin.get('/users');
    expect((await admin.postForm(`/users/${sender.id}/disable`, {})).status).toBe(302);
    // Redelivered: it had begun (its claim is stored), so it is finished, not refused with the name held.
    expect(await app.runtime.route(delivery)).toMatchObject({ status: 'accepted' });
    await app.runtime.store.notifyAppended();
    await waitFor(async () => (await competitorRow(id))?.name === name, 'the competitor in the list');
    await expectConsistent();
  });

  it('a rename and an add of that name at once: one holds the name, the other is told it exists', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await addCompetitorByForm(editor, unique('Renaming'));
      const version = (await competitorRow(id))?.version ?? 0;
      const name = unique('Contested');
      const [edited, added] = await Promise.all([edit(editor, id, name, version), addByForm(admin, name)]);
      expect([edited.status, added.status].sort()).toEqual([302, 409]);
      const loser = edited.status === 409 ? edited : added;
      expect(await messageOf(loser)).toMatch(/already exists/);
      expect(await liveNamed(name)).toBe(1);
    }
    await expectConsistent();
  });

  // ───────────────────────────── notes ─────────────────────────────

  it('a note saved on a competitor deleted meanwhile: stored before the delete or refused, no stray history', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await addCompetitorByForm(editor, unique('Noted then gone'));
      const historyBefore = await eventCount(app, 'CompetitorNoteUpdated');
      await editor.get('/competitors');
      const [noted, deleted] = await Promise.all([saveNote(editor, id, 'last words'), remove(admin, id)]);
      expect(deleted.status).toBe(302);
      const notes = await eventCount(app, 'CompetitorNoteUpdated');
      if (noted.status === 200) {
        expect(notes).toBe(historyBefore + 1);
      } else {
        expect(noted.status).toBe(404);
        expect(await messageOf(noted)).toBe('This competitor was deleted.');
        expect(notes).toBe(historyBefore);
      }
    }
    await expectConsistent();
  });

  it('two people save the same note from the same version at once: one saved, the other told who changed it', async () => {
    const other = await freshUser(app, 'editor', 'noter');
    const id = await addCompetitorByForm(editor, unique('Contested note'));
    await editor.get('/competitors');
    await other.client.get('/competitors');
    const before = await eventCount(app, 'CompetitorNoteUpdated');
    const answers = await Promise.all([
      saveNote(editor, id, 'from the first'),
      saveNote(other.client, id, 'from the second', 0),
    ]);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    const refused = answers.find((a) => a.status !== 200);
    if (refused) {
      expect(refused.status).toBe(409);
      expect(await messageOf(refused)).toMatch(/changed this note .*after you opened it/);
    }
    const saved = await eventCount(app, 'CompetitorNoteUpdated');
    expect(saved).toBe(before + statuses.filter((s) => s === 200).length);
    await expectConsistent();
  });

  // ───────────────────────────── ranking and board ─────────────────────────────

  it('a drop naming a competitor deleted meanwhile is stored before the delete or refused; ranks stay 1..n', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await addCompetitorByForm(editor, unique('Ranked then gone'));
      const { ids, version } = await ranking();
      await editor.get('/ranking');
      const [dropped, deleted] = await Promise.all([
        reorder(editor, [...ids].reverse(), version),
        remove(admin, id),
      ]);
      expect(deleted.status).toBe(302);
      if (dropped.status !== 200) {
        expect(dropped.status).toBe(400);
        expect(await messageOf(dropped)).toMatch(/was deleted or never existed\)\. Reload/);
      }
      await expectConsistent();
    }
  });

  it('a drop missing a competitor added meanwhile is refused by name, or was stored before the add', async () => {
    const { ids, version } = await ranking();
    await editor.get('/ranking');
    const name = unique('Late arrival');
    const [dropped, added] = await Promise.all([
      reorder(editor, [...ids].reverse(), version),
      addByForm(admin, name),
    ]);
    expect(added.status).toBe(302);
    if (dropped.status !== 200) {
      expect(dropped.status).toBe(400);
      expect(await messageOf(dropped)).toContain(`The list is missing a competitor: “${name}”`);
    }
    await expectConsistent();
  });

  it('two drops on the same version: one is stored, the other is told who moved what', async () => {
    const other = await freshUser(app, 'editor', 'dragger');
    await addCompetitorByForm(editor, unique('Drag A'));
    await addCompetitorByForm(editor, unique('Drag B'));
    const { ids, version } = await ranking();
    await editor.get('/ranking');
    await other.client.get('/ranking');
    const rotated = [...ids.slice(1), ids[0] as string];
    const answers = await Promise.all([
      reorder(editor, [...ids].reverse(), version),
      reorder(other.client, rotated, version),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const loser = answers.find((a) => a.status === 409) as Response;
    expect(await messageOf(loser)).toMatch(/moved .* after you loaded this list/);
    const stored = (await ranking()).ids;
    const winner = answers[0]?.status === 200 ? [...ids].reverse() : rotated;
    expect(stored).toEqual(winner);
    await expectConsistent();
  });

  it('the move buttons racing a delete of the moved competitor or its neighbour: moved or refused, never 500', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await addCompetitorByForm(editor, unique('Button A'));
      await addCompetitorByForm(editor, unique('Button B'));
      const { version } = await ranking();
      await editor.get('/ranking');
      const [moved, deleted] = await Promise.all([
        editor.postForm('/ranking/move', { move: `${a}:down`, expect: String(version) }),
        remove(admin, a),
      ]);
      expect(deleted.status).toBe(302);
      expect(moved.status).toBe(302);
      expect(flashOf(moved)).toMatch(
        /^(Moved .*\.|The competitor .* is not in the ranking .*|.*cannot move further that way\.)$/,
      );
      await expectConsistent();
    }
  });

  it('a board drop moving a competitor deleted meanwhile is stored before the delete or refused', async () => {
    for (let round = 0; round < 3; round++) {
      const id = await addCompetitorByForm(editor, unique('Board then gone'));
      const groups = await board();
      const { version } = await ranking();
      // Move it from SMB to the first segment.
      const moved = groups.map((g, i) => ({
        id: g.id,
        members: i === 0 ? [...g.members.filter((m) => m !== id), id] : g.members.filter((m) => m !== id),
      }));
      await editor.get('/segments');
      const [dropped, deleted] = await Promise.all([reorganize(editor, moved, version), remove(admin, id)]);
      expect(deleted.status).toBe(302);
      if (dropped.status !== 200) {
        expect(dropped.status).toBe(400);
        expect(await messageOf(dropped)).toMatch(/was deleted or never existed\)\. Reload/);
      }
      await expectConsistent();
    }
  });

  it('the board move buttons racing a delete: moved or refused with words, never 500', async () => {
    const id = await addCompetitorByForm(editor, unique('Board button'));
    await addCompetitorByForm(editor, unique('Board neighbour'));
    const { version } = await ranking();
    await editor.get('/segments');
    const [moved, deleted] = await Promise.all([
      editor.postForm('/segments/move', { move: `${id}:up`, expect: String(version) }),
      remove(admin, id),
    ]);
    expect(deleted.status).toBe(302);
    expect(moved.status).toBe(302);
    expect(flashOf(moved)).not.toBe('');
    await expectConsistent();
  });

  // ───────────────────────────── users ─────────────────────────────

  const activeAdmins = async () =>
    (await query<{ id: string }>(`SELECT id FROM user_list WHERE role = 'admin' AND NOT disabled`)).map(
      (r) => r.id,
    );

  /** Sends a user-management command as the system (setting the stage, putting it back). */
  async function asSystem(command: Command) {
    const outcome = await app.runtime.route(envelope(command));
    expect(outcome.status, `${command.type} as the system`).toBe('accepted');
    await app.runtime.store.notifyAppended();
  }

  /**
   * Runs `race` with `keep` as the only active admins (every other one an editor for the while), then
   * puts every admin back as it was, whatever the race did.
   */
  async function withOnlyAdmins(keep: readonly string[], race: () => Promise<void>) {
    const others = (await activeAdmins()).filter((id) => !keep.includes(id));
    for (const userId of others)
      await asSystem({ type: 'ChangeUserRole', payload: { userId, role: 'editor' } });
    await waitFor(async () => (await activeAdmins()).length === keep.length, 'only the kept admins');
    try {
      await race();
    } finally {
      for (const userId of [...others, ...keep]) {
        await asSystem({ type: 'EnableUser', payload: { userId } });
        await asSystem({ type: 'ChangeUserRole', payload: { userId, role: 'admin' } });
      }
      await waitFor(
        async () => (await activeAdmins()).length >= others.length + keep.length,
        'the admins back',
      );
    }
  }

  /** What a person is told: the flash of a redirect, or the page's or JSON's message. */
  const told = async (response: Response) =>
    response.status === 302
      ? `${flashOf(response)} → ${response.headers.get('location')}`
      : `${response.status} ${await messageOf(response)}`;

  it('two admins demoting each other at once leave one admin; the last admin cannot demote or disable themselves', async () => {
    const x = await freshUser(app, 'admin', 'admin-x');
    const y = await freshUser(app, 'admin', 'admin-y');
    await withOnlyAdmins([x.id, y.id], async () => {
      await x.client.get('/users');
      await y.client.get('/users');
      const before = await eventCount(app, 'UserRoleChanged');
      const answers = await Promise.all([
        x.client.postForm(`/users/${y.id}/role`, { role: 'editor' }),
        y.client.postForm(`/users/${x.id}/role`, { role: 'editor' }),
      ]);
      const texts = await Promise.all(answers.map(told));
      expect(
        texts.filter((t) => /is now editor\./.test(t)),
        texts.join(' / '),
      ).toHaveLength(1);
      // The other is refused: at the door (already an editor), by the last-admin rule, or when decided.
      expect(
        texts.filter((t) =>
          /needs at least one active admin|do not have permission|Your role is now editor/.test(t),
        ),
        texts.join(' / '),
      ).toHaveLength(1);
      expect(await eventCount(app, 'UserRoleChanged')).toBe(before + 1);
      const admins = await activeAdmins();
      expect(admins).toHaveLength(1);
      const survivor = admins[0] === x.id ? x : y;
      // Alone now: demoting or disabling oneself, even both at once, is refused and changes nothing.
      await survivor.client.get('/users');
      const [demoted, disabled] = await Promise.all([
        survivor.client.postForm(`/users/${survivor.id}/role`, { role: 'viewer' }),
        survivor.client.postForm(`/users/${survivor.id}/disable`, {}),
      ]);
      expect(flashOf(demoted)).toMatch(/needs at least one active admin/);
      // Nobody disables their own account (ops-admin-review), last admin or not.
      expect(disabled.status).toBe(400);
      expect(await messageOf(disabled)).toContain('You cannot disable your own account.');
      expect(await activeAdmins()).toEqual([survivor.id]);
    });
    await expectConsistent();
  });

  it('two admins disabling each other at once leave one active admin, and the other is signed out', async () => {
    const x = await freshUser(app, 'admin', 'admin-p');
    const y = await freshUser(app, 'admin', 'admin-q');
    await withOnlyAdmins([x.id, y.id], async () => {
      await x.client.get('/users');
      await y.client.get('/users');
      const before = await eventCount(app, 'UserDisabled');
      const answers = await Promise.all([
        x.client.postForm(`/users/${y.id}/disable`, {}),
        y.client.postForm(`/users/${x.id}/disable`, {}),
      ]);
      const texts = await Promise.all(answers.map(told));
      expect(
        texts.filter((t) => /is disabled\./.test(t)),
        texts.join(' / '),
      ).toHaveLength(1);
      // The other is refused: signed out at the door, by the last-admin rule, or when decided.
      expect(
        texts.filter((t) =>
          /needs at least one active admin|Your account was disabled|→ \/login|Your session has ended/.test(
            t,
          ),
        ),
        texts.join(' / '),
      ).toHaveLength(1);
      expect(await eventCount(app, 'UserDisabled')).toBe(before + 1);
      const admins = await activeAdmins();
      expect(admins).toHaveLength(1);
      const loser = admins[0] === x.id ? y : x;
      expect((await loser.client.get('/users')).status).toBe(302);
    });
    await expectConsistent();
  });

  it('two admins add a user with the same email at once: one user, one password, the other form says why', async () => {
    const second = await freshUser(app, 'admin', 'adder-admin');
    const email = `same-${randomUUID().slice(0, 6)}@rivals.test`;
    const form = (password: string) => ({
      email,
      displayName: 'Same Email',
      role: 'viewer',
      password,
      _idempotency_key: randomUUID(),
    });
    await admin.get('/users/new');
    await second.client.get('/users/new');
    const passwords = [`${TEST_PASSWORD}-one`, `${TEST_PASSWORD}-two`];
    const answers = await Promise.all([
      admin.postForm('/users', form(passwords[0] as string)),
      second.client.postForm('/users', form(passwords[1] as string)),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([302, 400]);
    const loser = answers.find((a) => a.status === 400) as Response;
    expect(await messageOf(loser)).toMatch(/A user with this email already exists/);
    const winner = passwords[answers.findIndex((a) => a.status === 302)] as string;
    const [users] = await query<{ n: number }>('SELECT count(*)::int AS n FROM user_list WHERE email = $1', [
      email,
    ]);
    expect(users?.n).toBe(1);
    const [orphans] = await query<{ n: number }>(
      'SELECT count(*)::int AS n FROM user_credentials c WHERE NOT EXISTS (SELECT 1 FROM user_list u WHERE u.id = c.user_id)',
    );
    expect(orphans?.n).toBe(0);
    const signIn = new TestClient(app.url);
    await signIn.get('/login');
    expect((await signIn.postForm('/login', { email, password: winner })).status).toBe(302);
    await expectConsistent();
  });

  it('disable and enable of the same user at once, twice each: one event per change that happened', async () => {
    const second = await freshUser(app, 'admin', 'toggler');
    const target = await freshUser(app, 'viewer', 'toggled');
    await admin.get('/users');
    await second.client.get('/users');
    const before = { off: await eventCount(app, 'UserDisabled'), on: await eventCount(app, 'UserEnabled') };
    const answers = await Promise.all([
      admin.postForm(`/users/${target.id}/disable`, {}),
      second.client.postForm(`/users/${target.id}/disable`, {}),
      admin.postForm(`/users/${target.id}/enable`, {}),
      second.client.postForm(`/users/${target.id}/enable`, {}),
    ]);
    expect(answers.map((a) => a.status)).toEqual([302, 302, 302, 302]);
    const off = (await eventCount(app, 'UserDisabled')) - before.off;
    const on = (await eventCount(app, 'UserEnabled')) - before.on;
    // Any order is a true story (disable, enable, disable again…), but each change is one event and
    // none is recorded twice: two disables in a row are one, as are two enables.
    expect(off).toBeGreaterThanOrEqual(1);
    expect(off - on).toBeGreaterThanOrEqual(0);
    expect(off - on).toBeLessThanOrEqual(1);
    await waitFor(async () => {
      const [row] = await query<{ disabled: boolean }>('SELECT disabled FROM user_list WHERE id = $1', [
        target.id,
      ]);
      return row?.disabled === off > on;
    }, 'the user list to show the last change');
    await expectConsistent();
  });

  /**
   * Holds the admission of the next command `matches` accepts until released: the request is in flight
   * (signed in, authorized) while other requests are answered.
   */
  function holdAdmission(matches: (command: Command) => boolean) {
    const inbox = app.runtime.inbox;
    const admit = inbox.admit.bind(inbox);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    inbox.admit = async (letter, ...rest) => {
      if (matches(letter.command)) {
        reached();
        await released;
      }
      return admit(letter, ...rest);
    };
    return {
      held,
      release() {
        inbox.admit = admit;
        release();
      },
    };
  }

  /** A note change by `author` that is in flight while `meanwhile` (an admin's change to them) is answered. */
  async function noteInFlight(author: { client: TestClient }, meanwhile: () => Promise<Response>) {
    const id = await addCompetitorByForm(editor, unique('In flight'));
    await author.client.get('/competitors');
    const before = await eventCount(app, 'CompetitorNoteUpdated');
    const gate = holdAdmission(
      (command) => command.type === 'UpdateCompetitorNote' && command.payload.competitorId === id,
    );
    const note = saveNote(author.client, id, 'written just before losing the right to');
    let change: Response;
    try {
      await gate.held;
      change = await meanwhile();
    } finally {
      gate.release();
    }
    return { answer: await note, change, stored: (await eventCount(app, 'CompetitorNoteUpdated')) - before };
  }

  it('a change in flight when its author is disabled is not stored once the disable is answered', async () => {
    const author = await freshUser(app, 'editor', 'disabled-mid-flight');
    const { answer, change, stored } = await noteInFlight(author, async () => {
      await admin.get('/users');
      return admin.postForm(`/users/${author.id}/disable`, {});
    });
    expect(flashOf(change)).toMatch(/is disabled\./);
    expect(answer.status).toBe(403);
    expect(await messageOf(answer)).toBe('Your account was disabled, so this change was not saved.');
    expect(stored).toBe(0);
    await expectConsistent();
  });

  it('a change in flight when its author loses the role it needs is not stored once the role change is answered', async () => {
    const author = await freshUser(app, 'editor', 'demoted-mid-flight');
    const { answer, change, stored } = await noteInFlight(author, async () => {
      await admin.get('/users');
      return admin.postForm(`/users/${author.id}/role`, { role: 'viewer' });
    });
    expect(flashOf(change)).toMatch(/is now viewer\./);
    expect(answer.status).toBe(403);
    expect(await messageOf(answer)).toBe('Your role is now viewer, so this change was not saved.');
    expect(stored).toBe(0);
    // Promoted again, the same person saves notes as before.
    await asSystem({ type: 'ChangeUserRole', payload: { userId: author.id, role: 'editor' } });
    await waitFor(async () => {
      const [row] = await query<{ role: string }>('SELECT role FROM user_list WHERE id = $1', [author.id]);
      return row?.role === 'editor';
    }, 'the author to be an editor again');
    const id = await addCompetitorByForm(editor, unique('Noted again'));
    await author.client.get('/competitors');
    expect((await saveNote(author.client, id, 'allowed again')).status).toBe(200);
    await expectConsistent();
  });

  it('an add-user form in flight when its admin is demoted says why on the form, not under a field', async () => {
    const author = await freshUser(app, 'admin', 'demoted-while-adding');
    await author.client.get('/users/new');
    const gate = holdAdmission((command) => command.type === 'AddUser');
    const email = `${randomUUID().slice(0, 8)}@example.test`;
    const added = author.client.postForm('/users', {
      email,
      displayName: 'Never added',
      role: 'viewer',
      password: 'a long enough password',
      _idempotency_key: randomUUID(),
    });
    try {
      await gate.held;
      await admin.get('/users');
      const demoted = await admin.postForm(`/users/${author.id}/role`, { role: 'viewer' });
      expect(flashOf(demoted)).toMatch(/is now viewer\./);
    } finally {
      gate.release();
    }
    const answer = await added;
    expect(answer.status).toBe(400);
    const page = await answer.text();
    expect(page).toMatch(/role="alert">Your role is now viewer, so this change was not saved\.</);
    expect(page).not.toContain('field-email-error');
    expect(await query('SELECT 1 FROM user_list WHERE email = $1', [email])).toEqual([]);
  });

  // ───────────────────────────── /ops ─────────────────────────────

  it('two admins act on the same dead letter at once: one action, one event, the other told what happened', async () => {
    const second = (await freshUser(app, 'admin', 'operator')).client;
    const id = await giveUp(app.runtime, envelope(addCompetitorCommand(unique('Dead'))));
    const before =
      (await eventCount(app, 'DeadLetterRetried')) + (await eventCount(app, 'DeadLetterDiscarded'));
    await admin.get('/ops');
    await second.get('/ops');
    const answers = await Promise.all([
      admin.postForm(`/ops/dead-letters/${id}/retry`, {}),
      second.postForm(`/ops/dead-letters/${id}/discard`, {}),
    ]);
    expect(answers.map((a) => a.status)).toEqual([302, 302]);
    const flashes = answers.map(flashOf);
    expect(flashes.filter((f) => /^(Sent AddCompetitor|Discarded)/.test(f))).toHaveLength(1);
    expect(flashes.filter((f) => /already (retried|discarded)/.test(f))).toHaveLength(1);
    const after =
      (await eventCount(app, 'DeadLetterRetried')) + (await eventCount(app, 'DeadLetterDiscarded'));
    expect(after).toBe(before + 1);
    await expectConsistent();
  });

  /**
   * A Retry or Discard by `operator` that has passed the role check and is looking its letter up while
   * `meanwhile` (another admin's change to the operator) is answered.
   */
  async function letterActionInFlight(
    operator: { client: TestClient },
    action: 'retry' | 'discard',
    meanwhile: () => Promise<Response>,
  ) {
    const id = await giveUp(app.runtime, envelope(addCompetitorCommand(unique('Dead in flight'))));
    await operator.client.get('/ops');
    const letters = app.runtime.deadLetters;
    const find = letters.find.bind(letters);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const held = new Promise<void>((resolve) => (reached = resolve));
    letters.find = async (letterId) => {
      if (letterId === id) {
        reached();
        await released;
      }
      return find(letterId);
    };
    const acted = operator.client.postForm(`/ops/dead-letters/${id}/${action}`, {});
    let change: Response;
    try {
      await held;
      change = await meanwhile();
    } finally {
      letters.find = find;
      release();
    }
    const answer = await acted;
    const listed = (await letters.find(id)) !== undefined;
    return { answer, change, listed };
  }

  it('a Retry in flight when its admin is demoted is not carried out once the role change is answered', async () => {
    const operator = await freshUser(app, 'admin', 'demoted-operator');
    const before = await eventCount(app, 'DeadLetterRetried');
    const { answer, change, listed } = await letterActionInFlight(operator, 'retry', async () => {
      await admin.get('/users');
      return admin.postForm(`/users/${operator.id}/role`, { role: 'editor' });
    });
    expect(flashOf(change)).toMatch(/is now editor\./);
    expect(answer.status).toBe(403);
    expect(await messageOf(answer)).toContain('Your role is now editor, so this change was not saved.');
    expect(await eventCount(app, 'DeadLetterRetried')).toBe(before);
    expect(listed).toBe(true);
    await expectConsistent();
  });

  it('a Discard in flight when its admin is disabled is not carried out once the disable is answered', async () => {
    const operator = await freshUser(app, 'admin', 'disabled-operator');
    const before = await eventCount(app, 'DeadLetterDiscarded');
    const { answer, change, listed } = await letterActionInFlight(operator, 'discard', async () => {
      await admin.get('/users');
      return admin.postForm(`/users/${operator.id}/disable`, {});
    });
    expect(flashOf(change)).toMatch(/is disabled\./);
    expect(answer.status).toBe(403);
    expect(await messageOf(answer)).toContain('Your account was disabled, so this change was not saved.');
    expect(await eventCount(app, 'DeadLetterDiscarded')).toBe(before);
    expect(listed).toBe(true);
    await expectConsistent();
  });
});
