import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { rebuildProjections } from '#projections/rebuild/rebuild.ts';
import { databaseBackends } from '#tests/support/environment.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import { until } from '#tests/support/until.ts';

/*
 * A change is shown at the time its command was accepted. With no worker running for a while it is
 * stored much later, and "as of" a moment between the two used to leave it out (it read the stored
 * time): the history listed a note at 10:00 that the card "as of 10:02" did not have. Both the card and
 * `replay --to-time` now read the accepted time (docs/decisions/0020).
 */
describe.each(databaseBackends)('"as of" on the clock the pages show, on %s', (backend) => {
  let app: TestApp;
  const competitorId = randomUUID();
  const name = `Late-stored-${Date.now()}`;
  const note = `Accepted-early-${Date.now()}`;
  // Accepted two minutes ago, whole seconds (the "as of" field takes seconds); stored now.
  const accepted = Math.floor((Date.now() - 120_000) / 1000) * 1000;
  const between = new Date(accepted + 60_000);

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    const at = (offset: number) => ({ at: new Date(accepted + offset).toISOString() });
    await app.runtime.route(
      envelope(
        {
          type: 'AddCompetitor',
          payload: { competitorId, name, website: null, segmentId: 'smb', threat: 'low', headquarters: null },
        },
        at(0),
      ),
    );
    await app.runtime.route(
      envelope(
        { type: 'UpdateCompetitorNote', payload: { competitorId, column: 'pricing', value: note } },
        at(1000),
      ),
    );
  });
  afterAll(() => app.close());

  it('the history card as of a moment after the change was accepted, before it was stored, has it', async () => {
    const editor = await app.client('editor');
    const asOf = between.toISOString().slice(0, 19);
    let html = '';
    await until(async () => {
      html = await (await editor.get(`/competitors/${competitorId}/history?asOf=${asOf}&tz=UTC`)).text();
      return html.includes('data-history-entry="pricing:1"');
    }, 'the note in the history');
    // The card, not the list of versions under it (which shows every version whatever the moment).
    const card = html.slice(
      html.indexOf('aria-labelledby="as-of-heading"'),
      html.indexOf('data-history-count'),
    );
    expect(card).toContain('Historical view');
    expect(card).not.toContain('did not exist at that moment');
    expect(card).toContain(note);
  });

  it('replay --dry-run --to-time the same moment builds the competitor with its note', async () => {
    const [summary] = await rebuildProjections(app.db, app.runtime.store, [competitorListProjection], {
      dryRun: true,
      toTime: between,
    });
    // Only the competitor accepted before the moment: the segments and users came at the start.
    expect(summary).toMatchObject({ projection: 'competitor-list', events: 2, rows: 1 });
  });
});
