import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseBackends } from '#tests/support/environment.ts';
import { startTestApp, type TestApp } from '#tests/support/test-app.ts';
import type { TestClient } from '#tests/support/test-client.ts';

/**
 * /ranking with no competitor (a fresh install without demo data, or every competitor deleted): the page
 * says so and where to start, inside the region a live update re-renders, instead of drag instructions
 * above nothing.
 */

/** The ranking region as the page renders it (what a live update swaps in). */
const regionOf = (html: string) => /<section id="ranking-region"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';

describe.each(databaseBackends)('an empty ranking on %s', (backend) => {
  let app: TestApp;
  let editor: TestClient;
  let viewer: TestClient;

  beforeAll(async () => {
    app = await startTestApp(backend, { demoData: false });
    editor = await app.client('editor');
    viewer = await app.client('viewer');
  });
  afterAll(async () => app.close());

  it('says there is no competitor yet, offers an editor the form to add one, and gives no drag instructions', async () => {
    const forEditor = regionOf(await (await editor.get('/ranking')).text());
    expect(forEditor).toContain('No competitors yet.');
    expect(forEditor).toContain('href="/competitors/new"');
    expect(forEditor).not.toContain('Drag a competitor by its grip');

    const forViewer = regionOf(await (await viewer.get('/ranking')).text());
    expect(forViewer).toContain('No competitors yet.');
    expect(forViewer).not.toContain('href="/competitors/new"');
  });

  it('once a competitor is added, the ranking lists it with the drag instructions and no empty message', async () => {
    await editor.get('/competitors/new');
    const added = await editor.postForm('/competitors/new', {
      name: 'First Rival',
      website: '',
      segmentId: 'smb',
      threat: 'low',
      headquarters: '',
    });
    expect(added.status).toBe(302);
    const region = regionOf(await (await editor.get('/ranking')).text());
    expect(region).toContain('First Rival');
    expect(region).toContain('Drag a competitor by its grip');
    expect(region).not.toContain('No competitors yet.');
  });
});
