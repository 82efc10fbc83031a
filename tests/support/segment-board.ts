import type { TestClient } from './test-client.ts';

/** The segment board as a client sees it: its version and each segment's competitors, in order. */
export async function readBoard(client: TestClient) {
  const html = await (await client.get('/segments')).text();
  const version = Number(/id="segments-region"[^>]*data-version="(\d+)"/.exec(html)?.[1] ?? 'NaN');
  const groups = [
    ...html.matchAll(/<section class="note-card sortable-group"[^>]*data-id="([^"]+)"[\s\S]*?<\/section>/g),
  ].map((m) => ({
    id: m[1] as string,
    items: [...m[0].matchAll(/<li class="sortable-item" data-id="([^"]+)"/g)].map((i) => i[1] as string),
  }));
  return { html, version, groups };
}
