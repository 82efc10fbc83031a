/**
 * Drag-sorting (issue 12):
 *
 *  (a) decide: server time to validate (zod, the `reorder` method's schema) and decide (complete and
 *      current snapshot check, moves) a `size`-item ranking snapshot in which one item moved, against
 *      `JSON.parse` of the same request body, adjacent in every round; median and spread of `rounds`.
 *  (b) drops: Chromium, two browser contexts signed in on /ranking of a `items`-competitor ranking (real
 *      Postgres, one app process). `drops` times: a real mouse drag in the first page (item 2 onto item
 *      1), from the drop (a pointerup stamp in the page) to the moment the second page shows the new
 *      first item (a MutationObserver stamp): p50/p95. Both stamps are Date.now() on the same machine.
 *
 *  (c) scale (not in the default parts: it starts a private Postgres and seeds `scale` competitors):
 *      /ranking with 10,000 competitors in Chromium — server render time, time to interactive
 *      (`data-sort-ready`), and during a real mouse drag (`moves` moves, one per frame) the frame gaps
 *      (p50/p95) and long tasks, then drop → list ready again; `scaleRounds` rounds
 *      (tests/bench/support/drag-scale.ts).
 *
 *   npx tsx tests/bench/drag-sort.bench.ts [--parts=decide,drops,scale] [--size=10000] [--rounds=5]
 *     [--reps=20] [--items=200] [--drops=50] [--scale=10000] [--scaleRounds=3] [--moves=60]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Page } from '@playwright/test';
import type { Recorded } from '#events/envelope.ts';
import { rankingList } from '#events/ordering/commands.ts';
import { decideOrdering } from '#services/ordering/ordering.ts';
import {
  foldOrdering,
  initialOrderingState,
  type OrderingSourceEvent,
} from '#services/ordering/ordering-state.ts';
import { benchDragScale } from './support/drag-scale.ts';
import { knob, textKnob } from './support/knobs.ts';
import { reportMachine } from './support/machine.ts';
import { seedCompetitors } from './support/seed.ts';
import { launchBenchChromium, spawnBenchApp, waitForStatus } from './support/server-process.ts';
import { ensureAssets, openScratchPostgres } from './support/services.ts';
import { medianSpread, report, summarize } from './support/stats.ts';

const parts = textKnob('parts', 'decide,drops').split(',');
reportMachine('drag-sort');

if (parts.includes('decide')) {
  const size = knob('size', 10_000);
  const rounds = knob('rounds', 5);
  const reps = knob('reps', 20);
  const ids = Array.from({ length: size }, () => randomUUID());
  const state = initialOrderingState();
  ids.forEach((id, i) =>
    foldOrdering(state, {
      type: 'CompetitorAdded',
      data: {
        competitorId: id,
        name: `Rival ${i}`,
        website: null,
        segmentId: 'smb',
        threat: 'low',
        headquarters: null,
      },
      stream: `competitor-${id}`,
      streamVersion: 1,
    } as Recorded<OrderingSourceEvent>),
  );
  const dropped = [ids[size / 2] as string, ...ids.filter((_, i) => i !== size / 2)];
  const body = JSON.stringify({
    method: 'reorder',
    payload: dropped.map((value, i) => ({ order: i + 1, value })),
    expect: { version: 0 },
  });
  const parseMs: number[] = [];
  const decideMs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let t = performance.now();
    for (let r = 0; r < reps; r++) JSON.parse(body);
    parseMs.push((performance.now() - t) / reps);
    const parsed = (JSON.parse(body) as { payload: unknown }).payload;
    t = performance.now();
    for (let r = 0; r < reps; r++) {
      const items = rankingList.parse(parsed);
      const decision = decideOrdering(
        { type: 'ReorderRanking', payload: { items, expectedVersion: 0 } },
        state,
      );
      if (!('events' in decision) || decision.events.length !== 1) throw new Error('expected one move');
    }
    decideMs.push((performance.now() - t) / reps);
  }
  const parse = medianSpread(parseMs);
  const decide = medianSpread(decideMs);
  report('drag-sort.decide', {
    items: size,
    body_kb: body.length / 1024,
    validate_decide_ms: decide.median,
    validate_decide_spread: `${decide.min.toFixed(2)}-${decide.max.toFixed(2)}`,
    json_parse_ms: parse.median,
    json_parse_spread: `${parse.min.toFixed(2)}-${parse.max.toFixed(2)}`,
    ratio: decide.median / parse.median,
    rounds,
  });
}

if (parts.includes('drops')) {
  const items = knob('items', 200);
  const drops = knob('drops', 50);
  await ensureAssets();
  const db = await openScratchPostgres({ label: 'dragsort' });
  await seedCompetitors(db, items);
  await db.close();
  const password = 'bench-admin-password-0123';
  const server = await spawnBenchApp(db.url, password);
  const browser = await launchBenchChromium();
  try {
    await waitForStatus(server, '/readyz', { timeoutMs: 120_000 });
    const open = async () => {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${server.url}/login`);
      await page.getByLabel('Email').fill('bench@rivals.test');
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${server.url}/competitors`);
      await page.goto(`${server.url}/ranking`);
      await page.waitForSelector('[data-sortable][data-sort-ready="true"]');
      return page;
    };
    const [a, b] = [await open(), await open()] as [Page, Page];
    await a.evaluate(() =>
      document.addEventListener(
        'pointerup',
        () => ((window as { __droppedAt?: number }).__droppedAt = Date.now()),
        true,
      ),
    );
    await b.evaluate(() => {
      const w = window as { __want?: string; __seenAt?: number };
      new MutationObserver(() => {
        const first = document.querySelector<HTMLElement>('[data-sortable-list="ranking"] > .sortable-item');
        if (w.__want && first?.dataset.id === w.__want && !w.__seenAt) w.__seenAt = Date.now();
      }).observe(document.body, { childList: true, subtree: true });
    });
    a.on('response', (r) => {
      if (r.url().includes('/components/')) process.stderr.write(`drop answered ${r.status()}\n`);
    });
    b.on('console', (m) => process.stderr.write(`second browser: ${m.text()}\n`));
    const samples: number[] = [];
    for (let i = 0; i < drops; i++) {
      const list = a.locator('[data-sortable-list="ranking"] > .sortable-item');
      const want = (await list.nth(1).getAttribute('data-id')) ?? '';
      await b.evaluate((id) => Object.assign(window, { __want: id, __seenAt: undefined }), want);
      const from = await list.nth(1).locator('[data-drag-handle]').boundingBox();
      const to = await list.nth(0).boundingBox();
      if (!from || !to) throw new Error('nothing to drag');
      await a.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
      await a.mouse.down();
      await a.mouse.move(from.x + from.width / 2 + 5, from.y + from.height / 2 + 5, { steps: 3 });
      await a.mouse.move(to.x + 30, to.y + 3, { steps: 10 });
      await a.mouse.move(to.x + 30, to.y + 2);
      await a.mouse.up();
      await b.waitForFunction(() => (window as { __seenAt?: number }).__seenAt !== undefined, undefined, {
        timeout: 30_000,
      });
      const dropped = await a.evaluate(() => (window as { __droppedAt?: number }).__droppedAt ?? NaN);
      const seen = await b.evaluate(() => (window as { __seenAt?: number }).__seenAt ?? NaN);
      samples.push(seen - dropped);
      await a.waitForSelector('[data-sortable][data-sort-ready="true"]:not([data-saving])');
    }
    const s = summarize(samples);
    report('drag-sort.drop-to-second-browser', {
      items,
      drops: s.n,
      p50_ms: s.p50,
      p95_ms: s.p95,
      max_ms: s.max,
      backend: 'postgres',
    });
  } finally {
    await browser.close();
    await server.stop();
    await db.drop();
  }
}

if (parts.includes('scale')) {
  await benchDragScale({
    size: knob('scale', 10_000),
    rounds: knob('scaleRounds', 3),
    moves: knob('moves', 60),
  });
}
