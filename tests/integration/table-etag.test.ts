import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * A table refresh the browser already has is answered 304 without rendering (live updates make many
 * tabs ask again, most for the same rows): the tag covers the rows, the state, the user, their form
 * token and their time zone, so any change to what the fragment shows — or who asks — gets the full answer.
 */
describe.each(databaseBackends)('table refreshes by ETag on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let admin: TestClient;
  const view = '/competitors?sort=name:asc&page=1&perPage=15';

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: true });
    editor = await app.client('editor');
    admin = await app.client('admin');
  });
  afterAll(async () => app?.close());

  it('answers the same refresh 304 with no body, and a changed one 200 with a new tag', async () => {
    const first = await editor.get(view, { xhr: true });
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag') ?? '';
    expect(tag).toMatch(/^W\/"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    const html = await first.text();
    expect(html).toContain('data-table-region');

    const again = await editor.get(view, { xhr: true, headers: { 'If-None-Match': tag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');

    // Another page of the same table, or another sort: not the same fragment.
    const other = await editor.get('/competitors?sort=name:desc&page=1&perPage=15', {
      xhr: true,
      headers: { 'If-None-Match': tag },
    });
    expect(other.status).toBe(200);

    // A note on a row of this page changes the fragment: the full answer, with a new tag.
    const id = /data-row-id="([0-9a-f-]{36})"/.exec(html)?.[1] ?? '';
    expect(id).not.toBe('');
    await editor.get('/competitors');
    const note = `Tagged ${randomUUID()}`;
    const saved = await editor.postJson('/components/competitor-notes', {
      event: 'update-note',
      payload: { competitorId: id, column: 'general', value: note },
    });
    expect(saved.status).toBe(200);
    const changed = await editor.get(view, { xhr: true, headers: { 'If-None-Match': tag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
    expect(await changed.text()).toContain(note);
  });

  it('reads If-None-Match as RFC 9110 does: a list of tags, W/ or not, or *; a list without the tag gets the full answer', async () => {
    const first = await editor.get(view, { xhr: true });
    const tag = first.headers.get('etag') ?? '';
    const opaque = tag.replace(/^W\//, '');
    expect(opaque).toMatch(/^"[\w-]+"$/);
    const answer = (ifNoneMatch: string) =>
      editor.get(view, { xhr: true, headers: { 'If-None-Match': ifNoneMatch } });
    // Weak comparison (§13.1.2 says If-None-Match uses it): the W/ prefix on either side does not matter.
    for (const header of [
      `"stale", ${tag}`,
      `${tag}, "stale"`,
      `W/"one",W/"two" ,  ${tag}`,
      opaque,
      `"stale", ${opaque}`,
      `W/"a,b", ${tag}`,
      '*',
    ]) {
      const hit = await answer(header);
      expect({ header, status: hit.status }).toEqual({ header, status: 304 });
      expect(hit.headers.get('etag')).toBe(tag);
      expect(await hit.text()).toBe('');
    }
    const shorter = `${opaque.slice(0, -2)}"`;
    for (const header of [`"stale", W/"older"`, `W/${shorter}, ${shorter}`, `W/"x${opaque.slice(1)}`, '']) {
      const miss = await answer(header);
      expect({ header, status: miss.status }).toEqual({ header, status: 200 });
      expect(await miss.text()).toContain('data-table-region');
    }
    // HEAD is answered as GET is.
    const head = (ifNoneMatch: string) =>
      fetch(app.url + view, {
        method: 'HEAD',
        headers: {
          Cookie: editor.cookieHeader(),
          'X-Requested-With': 'XMLHttpRequest',
          'If-None-Match': ifNoneMatch,
        },
      });
    expect((await head(`"stale", ${opaque}`)).status).toBe(304);
    expect((await head(`"stale"`)).status).toBe(200);
  });

  it("does not answer 304 once the viewer's clock is another zone: the rows' times are written in it", async () => {
    editor.cookies.set('rivals_tz', 'UTC');
    const utc = await editor.get(view, { xhr: true });
    const tag = utc.headers.get('etag') ?? '';
    editor.cookies.set('rivals_tz', encodeURIComponent('Asia/Tokyo'));
    try {
      const tokyo = await editor.get(view, { xhr: true, headers: { 'If-None-Match': tag } });
      expect(tokyo.status).toBe(200);
      expect(await tokyo.text()).toContain('GMT+9');
    } finally {
      editor.cookies.delete('rivals_tz');
    }
  });

  it('does not answer 304 to another user holding the tag, nor tag full pages', async () => {
    const mine = await editor.get(view, { xhr: true });
    const tag = mine.headers.get('etag') ?? '';
    const theirs = await admin.get(view, { xhr: true, headers: { 'If-None-Match': tag } });
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('etag')).not.toBe(tag);

    const page = await editor.get(view, { headers: { 'If-None-Match': tag } });
    expect(page.status).toBe(200);
    expect(page.headers.get('etag')).toBeNull();
  });
});
