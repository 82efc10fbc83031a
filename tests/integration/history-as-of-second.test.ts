import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import { until } from '#tests/support/until.ts';

/*
 * What the history shows and what its "as of" reads are the same moment (docs/decisions/0025). The list
 * wrote times to the minute while the card was read to the start of the typed second: two versions in
 * one minute looked alike, and the card "as of" the very second a version was listed at (accepted at
 * …:05.4, read as …:05.0) left it out. The rows now say the second, link to the card as of their change,
 * and a typed second is read through its end.
 */
describe.each(databaseBackends)('the history "as of" to the second, on %s', (backend) => {
  let app: TestApp;
  const competitorId = randomUUID();
  const name = `To-the-second-${Date.now()}`;
  // Whole seconds two minutes ago; the two versions are 400 ms and 2.4 s into the same minute's seconds.
  const base = Math.floor((Date.now() - 120_000) / 60_000) * 60_000;
  const first = new Date(base + 5_400); // hh:mm:05.4
  const second = new Date(base + 7_400); // hh:mm:07.4
  const iso = (at: Date) => at.toISOString();
  const wall = (at: Date) => iso(at).slice(0, 19);
  const cardOf = (html: string) =>
    html.slice(html.indexOf('aria-labelledby="as-of-heading"'), html.indexOf('<h2>Note changes'));
  const rowOf = (html: string, version: number) => {
    const start = html.indexOf(`data-history-entry="pricing:${version}"`);
    return html.slice(start, html.indexOf('</li>', start));
  };

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    await app.runtime.route(
      envelope(
        {
          type: 'AddCompetitor',
          payload: { competitorId, name, website: null, segmentId: 'smb', threat: 'low', headquarters: null },
        },
        { at: new Date(base).toISOString() },
      ),
    );
    for (const [value, at] of [
      ['First price list', first],
      ['Second price list', second],
    ] as const)
      await app.runtime.route(
        envelope(
          { type: 'UpdateCompetitorNote', payload: { competitorId, column: 'pricing', value } },
          { at: iso(at) },
        ),
      );
  });
  afterAll(() => app.close());

  const history = async (query = '') => {
    const editor = await app.client('editor');
    let html = '';
    await until(async () => {
      html = await (await editor.get(`/competitors/${competitorId}/history${query}`)).text();
      return html.includes('data-history-entry="pricing:2"');
    }, 'both versions in the history');
    return html;
  };

  it('writes each version’s time to the second, so two in one minute are told apart', async () => {
    const html = await history();
    const shown = (at: Date) => `${iso(at).slice(11, 19)} UTC`;
    expect(rowOf(html, 1)).toContain(shown(first));
    expect(rowOf(html, 2)).toContain(shown(second));
  });

  it('reads a second typed from a row through its end: the card has the version listed at it', async () => {
    const card = cardOf(await history(`?asOf=${wall(first)}&tz=UTC`));
    // The banner says the second, and means its end.
    expect(card).toContain(`<time dateTime="${wall(first)}.999Z">`);
    expect(card).toContain(`${iso(first).slice(11, 19)} UTC</time>, with every change listed at or before`);
    expect(card).toContain('First price list');
    // A second earlier it was not there yet.
    const before = cardOf(await history(`?asOf=${wall(new Date(first.getTime() - 1000))}&tz=UTC`));
    expect(before).toContain('Historical view');
    expect(before).not.toContain('First price list');
  });

  it('links each row to the card as of its change, which shows that version and marks the later one', async () => {
    const html = await history();
    const link = /href="([^"]+)"[^>]*>Battlecard as of this change/.exec(rowOf(html, 1))?.[1];
    expect(link).toBeDefined();
    const href = (link ?? '').replaceAll('&amp;', '&');
    expect(href).toContain(`asOf=${encodeURIComponent(wall(first))}`);
    const landed = await history(href.slice(href.indexOf('?')).replace(/#.*$/, ''));
    expect(cardOf(landed)).toContain('First price list');
    expect(cardOf(landed)).not.toContain('Second price list');
    expect(rowOf(landed, 1)).toContain('data-as-of="in"');
    expect(rowOf(landed, 2)).toContain('data-as-of="after"');
    expect(rowOf(landed, 2)).toContain('made after the moment shown above');
  });

  it('a moment that has not come yet shows the card as it is now, with its rank', async () => {
    let rank = 0;
    await until(async () => {
      const { rows } = await app.db.pool.query<{ rank: number }>(
        'SELECT rank FROM competitor_list WHERE id = $1',
        [competitorId],
      );
      rank = rows[0]?.rank ?? 0;
      return rank > 0;
    }, 'the competitor ranked');
    const card = cardOf(await history('?asOf=9999-12-31T23:59:59&tz=UTC'));
    expect(card).toContain('has not come yet: this is the battlecard as it is now.');
    expect(card).toContain('Second price list');
    // It said "as it is now" and showed "Rank —".
    expect(card).toMatch(new RegExp(`<dt>Rank</dt><dd>${rank}</dd>`));
    // A past moment's card still shows none, rather than today's.
    expect(cardOf(await history(`?asOf=${wall(second)}&tz=UTC`))).toContain('<dt>Rank</dt><dd>—</dd>');
  });

  it('an address giving "as of" or its zone more than once is told so (400), not shown as now', async () => {
    await history(); // both versions projected
    const editor = await app.client('editor');
    const path = `/competitors/${competitorId}/history`;
    const twice = await editor.get(`${path}?asOf=${wall(first)}&asOf=${wall(second)}`);
    expect(twice.status).toBe(400);
    const html = await twice.text();
    expect(html).toContain('The address gives “as of” more than once. Give one date and time below.');
    expect(html).not.toContain('aria-labelledby="as-of-heading"'); // no card is shown
    const zones = await editor.get(`${path}?asOf=${wall(first)}&tz=UTC&tz=Europe%2FBerlin`);
    expect(zones.status).toBe(400);
    expect(await zones.text()).toContain('The address gives the time zone (tz) more than once.');
  });

  it('reads a time typed to the minute as its :00, and says that second', async () => {
    const minute = wall(new Date(base)).slice(0, 16);
    const card = cardOf(await history(`?asOf=${minute}&tz=UTC`));
    expect(card).toContain(`${iso(new Date(base)).slice(11, 16)}:00 UTC`);
    expect(card).not.toContain('First price list');
  });
});
