import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { addCompetitorCommand, envelope } from './runtime-pieces.ts';
import type { TestApp } from './test-app.ts';
import type { TestClient } from './test-client.ts';

/** The ranking as a client sees it: its page, the version a move would `expect`, and the ids in order. */
export async function readRanking(client: TestClient) {
  const html = await (await client.get('/ranking')).text();
  const section = /<section id="ranking-region"[^>]*>/.exec(html)?.[0] ?? '';
  return {
    html,
    version: Number(/data-version="(\d+)"/.exec(section)?.[1] ?? 'NaN'),
    ids: [...html.matchAll(/<li class="sortable-item" data-id="([^"]+)"/g)].map((m) => m[1] as string),
  };
}

/**
 * Adds a competitor per name (in `segmentOf(name)`) and waits until `client`'s ranking lists them all;
 * their ids, in the order of the names.
 */
export async function addRankedCompetitors(
  app: TestApp,
  client: TestClient,
  names: readonly string[],
  segmentOf: (name: string) => string,
): Promise<string[]> {
  const ids: string[] = [];
  for (const name of names) {
    const command = addCompetitorCommand(name, { segmentId: segmentOf(name) });
    expect((await app.runtime.route(envelope(command))).status).toBe('accepted');
    ids.push(command.payload.competitorId);
  }
  await app.runtime.store.notifyAppended();
  const deadline = Date.now() + 10_000;
  while ((await readRanking(client)).ids.length < names.length && Date.now() < deadline) await sleep(20);
  return ids;
}

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
