import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';
import { formatTime } from '#web/components/format.ts';
import { TIME_ZONE_COOKIE } from '#web/components/time-zone.ts';

const errorOf = (html: string, field: string) =>
  new RegExp(`id="field-${field}-error">([^<]*)<`).exec(html)?.[1];
const valueOf = (html: string, field: string) =>
  new RegExp(`name="${field}"[^>]*value="([^"]*)"`).exec(html)?.[1];
const selectedOf = (html: string, field: string) =>
  new RegExp(`<select[^>]*name="${field}"[\\s\\S]*?<option value="([^"]*)" selected=""`).exec(html)?.[1];
const unescape = (text: string | undefined) =>
  text?.replaceAll('&quot;', '"').replaceAll('&#x27;', "'").replaceAll('&amp;', '&');

/** The edit form's fields as the page rendered them, as a browser would send them back. */
function formOf(html: string): Record<string, string> {
  return {
    name: unescape(valueOf(html, 'name')) ?? '',
    website: unescape(valueOf(html, 'website')) ?? '',
    segmentId: selectedOf(html, 'segmentId') ?? '',
    threat: selectedOf(html, 'threat') ?? '',
    headquarters: unescape(valueOf(html, 'headquarters')) ?? '',
    expectedVersion: valueOf(html, 'expectedVersion') ?? '',
    baseSegmentId: valueOf(html, 'baseSegmentId') ?? '',
    _idempotency_key: valueOf(html, '_idempotency_key') ?? '',
  };
}

describe.each(databaseBackends)('an edit form opened before another edit, on %s', (backend) => {
  let app: TestApp;
  let admin: TestClient;
  let editor: TestClient;
  let id = '';

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    admin = await app.client('admin');
    editor = await app.client('editor');
    await editor.get('/competitors/new');
    const added = await editor.postForm('/competitors/new', {
      name: 'Initech',
      website: 'https://initech.example',
      segmentId: 'enterprise',
      threat: 'medium',
      headquarters: 'Austin',
    });
    id = (added.headers.get('location') ?? '').split('/').at(-1) ?? '';
  });
  afterAll(async () => app.close());

  const open = async (client: TestClient) =>
    formOf(await (await client.get(`/competitors/${id}/edit`)).text());
  const card = async () => (await editor.get(`/competitors/${id}`)).text();
  const eventCount = async () =>
    (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events')).rows[0]?.n;

  it('saves what each changed when the changes do not overlap, and a retry of that send is the same save', async () => {
    const mine = await open(editor);
    const theirs = await open(admin);
    expect(
      (await admin.postForm(`/competitors/${id}/edit`, { ...theirs, website: 'https://initech.io' })).status,
    ).toBe(302);
    const send = { ...mine, headquarters: 'Dallas' };
    const saved = await editor.postForm(`/competitors/${id}/edit`, send);
    expect(saved.status).toBe(302);
    const html = await card();
    expect(html).toContain('https://initech.io');
    expect(html).toContain('Dallas');
    // The browser sends it again (a lost answer): the same command, answered as before, nothing more stored.
    const before = await eventCount();
    await editor.get(`/competitors/${id}/edit`);
    expect((await editor.postForm(`/competitors/${id}/edit`, send)).status).toBe(302);
    expect(await eventCount()).toBe(before);
  });

  it('shows fields both changed again, marked with who wrote what when, and the next send goes through', async () => {
    editor.cookies.set(TIME_ZONE_COOKIE, 'Asia/Tokyo');
    const mine = await open(editor);
    const theirs = await open(admin);
    const at = new Date().toISOString();
    expect(
      (await admin.postForm(`/competitors/${id}/edit`, { ...theirs, threat: 'high', name: 'Initech Corp' }))
        .status,
    ).toBe(302);
    const refused = await editor.postForm(`/competitors/${id}/edit`, {
      ...mine,
      threat: 'low',
      headquarters: 'Houston',
    });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    // Theirs where only they changed, mine where I did, the version advanced.
    const again = formOf(html);
    expect(again).toMatchObject({ name: 'Initech Corp', threat: 'low', headquarters: 'Houston' });
    expect(Number(again.expectedVersion)).toBeGreaterThan(Number(mine.expectedVersion));
    const message = unescape(errorOf(html, 'threat')) ?? '';
    expect(message).toMatch(
      /^Test admin changed this to “high” \(\d{1,2} \w{3,4} \d{4}, \d{2}:\d{2} GMT\+9\); keep yours or use theirs\.$/,
    );
    // On the Tokyo clock: within a minute of when the admin saved.
    const minute = (iso: string) => formatTime(iso, 'Asia/Tokyo');
    expect([minute(at), minute(new Date(Date.parse(at) + 60_000).toISOString())]).toContain(
      /\((.*)\)/.exec(message)?.[1],
    );
    expect(unescape(html)).toContain('Test admin changed this competitor after you opened this form.');
    expect(await card()).toContain('badge--threat-high');
    // Keep mine: the form as shown is sent again, with its new version and key.
    const kept = await editor.postForm(`/competitors/${id}/edit`, again);
    expect(kept.status).toBe(302);
    const now = await card();
    expect(now).toContain('badge--threat-low');
    expect(now).toContain('Initech Corp');
    expect(now).toContain('Houston');
    editor.cookies.delete(TIME_ZONE_COOKIE);
  });

  it('says "you" when the change the form meets was the same user’s, in another tab', async () => {
    const first = await open(editor);
    const second = await open(editor);
    expect((await editor.postForm(`/competitors/${id}/edit`, { ...first, threat: 'high' })).status).toBe(302);
    const refused = await editor.postForm(`/competitors/${id}/edit`, { ...second, threat: 'medium' });
    expect(refused.status).toBe(409);
    const html = unescape(await refused.text()) ?? '';
    expect(html).toContain(
      'You changed this competitor in another tab or window after you opened this form.',
    );
    expect(html).not.toContain('Someone else');
    expect(unescape(errorOf(html, 'threat'))).toMatch(
      /^You changed this to “high” in another tab or window \(.* UTC\)/,
    );
  });

  it('meets a rename since with a conflict elsewhere, not by claiming the old name back (taken again meanwhile)', async () => {
    const mine = await open(editor);
    const theirs = await open(admin);
    expect(
      (
        await admin.postForm(`/competitors/${id}/edit`, {
          ...theirs,
          name: 'Initrode',
          headquarters: 'Plano',
        })
      ).status,
    ).toBe(302);
    // The old name is free now, and a new competitor takes it.
    await admin.get('/competitors/new');
    const other = { name: mine.name ?? '', website: '', segmentId: 'smb', threat: 'low', headquarters: '' };
    expect((await admin.postForm('/competitors/new', other)).status).toBe(302);
    // The form never touched the name: the conflict is the headquarters, and the name shown is the new one.
    const refused = await editor.postForm(`/competitors/${id}/edit`, { ...mine, headquarters: 'Irving' });
    expect(refused.status).toBe(409);
    const html = await refused.text();
    expect(errorOf(html, 'name')).toBeUndefined();
    expect(unescape(errorOf(html, 'headquarters'))).toMatch(/^Test admin changed this to “Plano”/);
    expect(formOf(html)).toMatchObject({ name: 'Initrode', headquarters: 'Irving' });
    const kept = await editor.postForm(`/competitors/${id}/edit`, formOf(html));
    expect(kept.status).toBe(302);
    expect(await card()).toContain('Irving');
  });

  it('still refuses a form naming a version the competitor never had', async () => {
    const form = await open(editor);
    const refused = await editor.postForm(`/competitors/${id}/edit`, {
      ...form,
      threat: 'low',
      expectedVersion: '999',
      _idempotency_key: randomUUID(),
    });
    expect(refused.status).toBe(409);
    expect(unescape(await refused.text())).toContain('Reload the page and make your change again.');
  });

  it('says which changes made since the form was opened were kept with the save', async () => {
    const mine = await open(editor);
    const theirs = await open(admin);
    const renamed = `Initech Merged ${randomUUID().slice(0, 8)}`;
    expect(
      (await admin.postForm(`/competitors/${id}/edit`, { ...theirs, name: renamed, website: '' })).status,
    ).toBe(302);
    const saved = await editor.postForm(`/competitors/${id}/edit`, { ...mine, headquarters: 'Plano' });
    expect(saved.status).toBe(302);
    // The notice names the competitor as it is now, and what the other change brought.
    expect(unescape(await card())).toContain(
      `${renamed} was saved, with the changes made since you opened the form kept (name “${renamed}”, website cleared).`,
    );
    // A save that met no other change says only that.
    const again = await open(editor);
    expect(
      (await editor.postForm(`/competitors/${id}/edit`, { ...again, headquarters: 'Irving' })).status,
    ).toBe(302);
    const html = unescape(await card()) ?? '';
    expect(html).toContain(`${renamed} was saved.`);
    expect(html).not.toContain('since you opened the form');
  });
});
