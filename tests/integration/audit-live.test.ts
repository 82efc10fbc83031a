import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Socket } from 'socket.io-client';
import { recordOperation } from '#services/operations/record.ts';
import { compareMarks } from '#web/realtime/live-mark.ts';
import type { AuditMessage } from '#web/realtime/audit-message.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import { until } from '#tests/support/until.ts';
import {
  handshakeResult,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';

/*
 * /audit refreshed live only for competitor changes: browsers are told of those once the competitor list
 * has them, and its position is the one a page checks after being offline. A user added, disabled or
 * given another role, a rebuild, a dead letter retried or discarded reach the audit log and no other
 * read model a page follows, so an open audit page never showed them. The audit feed now tells sockets
 * that may read the audit log (editors, admins) its newest line's position, nothing more, and
 * /live/position gives them the same to catch up with.
 */
describe.each(securityBackends)('the audit log heard live, on %s', (backend) => {
  let app: SecurityApp;
  let editor: TestClient;
  let viewer: TestClient;

  beforeAll(async () => {
    app = await startSecurityApp(backend);
    editor = await app.client('editor');
    viewer = await app.client('viewer');
  });
  afterAll(() => app.close());

  /** The mark (live-mark.ts) of the newest line of a type: its event's transaction and position. */
  const newestLine = async (type: string) => {
    const { rows } = await app.db.pool.query<{ mark: string }>(
      `SELECT e.transaction_id::text || ':' || e.position AS mark FROM events e
       WHERE e.position = (SELECT max(position) FROM audit_log WHERE type = $1)`,
      [type],
    );
    return rows[0]?.mark;
  };
  /** Whether a mark heard is at or after the line's: the audit log the page reads then has it. */
  const reached = (heard: string[], line: string | undefined) =>
    line !== undefined && heard.some((mark) => compareMarks(mark, line) >= 0);

  const listen = async (client: TestClient) => {
    const socket: Socket = app.socket({ cookie: client.cookieHeader() });
    const heard: { event: string; payload: unknown }[] = [];
    socket.onAny((event: string, payload: unknown) => heard.push({ event, payload }));
    expect((await handshakeResult(socket)).connected).toBe(true);
    const marks = () => heard.filter((h) => h.event === 'audit').map((h) => (h.payload as AuditMessage).mark);
    return { heard, marks };
  };

  it("an editor's socket hears of a user change and an operator action; a viewer's hears nothing of them", async () => {
    const editorSide = await listen(editor);
    const viewerSide = await listen(viewer);

    const userId = randomUUID();
    await app.runtime.route(
      envelope({
        type: 'AddUser',
        payload: {
          userId,
          email: `grace-${userId}@example.com`,
          displayName: 'Grace Hopper',
          role: 'viewer',
        },
      }),
    );
    await app.runtime.route(envelope({ type: 'ChangeUserRole', payload: { userId, role: 'editor' } }));
    await app.runtime.store.notifyAppended();
    await until(
      async () => reached(editorSide.marks(), await newestLine('UserRoleChanged')),
      'the role change heard by the editor',
    );

    await recordOperation(app.runtime.store, {
      type: 'ProjectionRebuilt',
      data: {
        projection: 'audit-log',
        events: 3,
        rows: 3,
        seconds: 0.1,
        resumed: false,
        toPosition: null,
        toTime: null,
        dryRun: true,
        differences: 0,
      },
    });
    await app.runtime.store.notifyAppended();
    await until(
      async () => reached(editorSide.marks(), await newestLine('ProjectionRebuilt')),
      'the rebuild heard by the editor',
    );

    // The viewer may not read the audit log: its socket is not told it changed, let alone what changed.
    expect(viewerSide.heard.filter((h) => h.event === 'audit')).toEqual([]);
    expect(JSON.stringify(viewerSide.heard)).not.toContain('Grace Hopper');
    expect(JSON.stringify(editorSide.heard)).not.toContain('Grace Hopper');
  });

  it("/live/position gives an editor the audit log's checkpoint to catch up with, a viewer nothing of it", async () => {
    const { rows } = await app.db.pool.query<{ mark: string }>(
      `SELECT transaction_id::text || ':' || position AS mark FROM projection_checkpoints
       WHERE projection = 'audit-log'`,
    );
    const asEditor = (await (await editor.get('/live/position', { xhr: true })).json()) as {
      auditMark?: string;
    };
    expect(asEditor.auditMark).toBe(rows[0]?.mark);
    // At or after the newest line's own mark.
    expect(reached([asEditor.auditMark ?? ''], await newestLine('ProjectionRebuilt'))).toBe(true);
    const asViewer = (await (await viewer.get('/live/position', { xhr: true })).json()) as object;
    expect(asViewer).not.toHaveProperty('auditMark');
    expect(asViewer).not.toHaveProperty('audit');
  });

  /*
   * A tab loaded before marks (opened before an upgrade, kept open across it) runs the script it was
   * given, which compares numbers: `position` of /live/position and of the messages, `audit` of
   * /live/position. Answered marks only, it read undefined and a string, kept NaN, and every comparison
   * after was false: its head checks never refreshed (a change made while its socket was reconnecting to
   * an upgraded instance was never shown) and an open audit log never refreshed live again, until a
   * reload (found by helper-36's rolling-upgrade review, running the previous version's page against
   * this one).
   */
  it('still tells a tab loaded before marks the positions its script compares', async () => {
    const checkpoints = async () => {
      const { rows } = await app.db.pool.query<{ projection: string; position: number }>(
        `SELECT projection, position FROM projection_checkpoints
         WHERE projection IN ('competitor-list', 'audit-log')`,
      );
      return new Map(rows.map((r) => [r.projection, Number(r.position)]));
    };
    const editorSide = await listen(editor);
    await app.runtime.route(
      envelope({
        type: 'AddUser',
        payload: {
          userId: randomUUID(),
          email: `ada-${randomUUID()}@example.com`,
          displayName: 'Ada Lovelace',
          role: 'viewer',
        },
      }),
    );
    await app.runtime.store.notifyAppended();
    await until(async () => reached(editorSide.marks(), await newestLine('UserAdded')), 'the user heard');
    const audits = editorSide.heard.filter((h) => h.event === 'audit').map((h) => h.payload as AuditMessage);
    expect(audits.length).toBeGreaterThan(0);
    for (const message of audits) expect(message.position).toBe(Number(message.mark.split(':')[1]));

    const positions = await checkpoints();
    const asEditor = (await (await editor.get('/live/position', { xhr: true })).json()) as {
      position?: unknown;
      audit?: unknown;
    };
    expect(asEditor.position).toBe(positions.get('competitor-list'));
    expect(asEditor.audit).toBe(positions.get('audit-log'));
    const asViewer = (await (await viewer.get('/live/position', { xhr: true })).json()) as {
      position?: unknown;
    };
    expect(asViewer.position).toBe(positions.get('competitor-list'));
    expect(asViewer).not.toHaveProperty('audit');
  });
});
