import { performance } from 'node:perf_hooks';
import type { Page } from '@playwright/test';
import { eventRegistry } from '#events/all-events.ts';
import { createEventStore } from '#events/store/event-store.ts';
import { migrate } from '#infra/db/migrate.ts';
import { openPostgresDatabase } from '#infra/db/open-postgres.ts';
import { bootstrapContent } from '#services/bootstrap/bootstrap.ts';
import { createCommandRouter } from '#services/command-router.ts';
import { seedCompetitors } from '#services/seed/seed-competitors.ts';
import { startPostgres } from '#tests/cluster/support/services.ts';
import { launchBenchChromium, spawnBenchApp, waitForStatus } from './server-process.ts';
import { ensureAssets, silentLog, sleep } from './services.ts';
import { medianSpread, report, summarize } from './stats.ts';

/**
 * A `size`-competitor ranking in Chromium (a private Postgres, so the shared one never carries the
 * seeding; one app process): the server render time of /ranking, the time to interactive (the list's
 * `data-sort-ready`), then a real mouse drag paced one move per animation frame, with every frame gap
 * (requestAnimationFrame) and long task (PerformanceObserver 'longtask') recorded in the page, and the
 * drop until the list is ready again. `rounds` page loads and drags; figures are medians and spreads.
 */
export async function benchDragScale(options: { size: number; rounds: number; moves: number }) {
  const { size, rounds, moves } = options;
  await ensureAssets();
  const postgres = await startPostgres();
  const url = `postgres://postgres@127.0.0.1:${postgres.port}/rivals`;
  const db = await openPostgresDatabase(url, silentLog);
  await migrate(db.pool);
  const store = createEventStore(db.pool, eventRegistry);
  await bootstrapContent(store, createCommandRouter(store), { demoData: false });
  await seedCompetitors(db.pool, store, { count: size, seed: 12 });
  process.stderr.write(`seeded ${size} competitors\n`);

  const password = 'bench-admin-password-0123';
  const server = await spawnBenchApp(url, password);
  const browser = await launchBenchChromium();
  try {
    await waitForStatus(server, '/readyz', { timeoutMs: 180_000 });
    for (let shown = 0; shown < size;) {
      const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM competitor_list');
      shown = rows[0]?.n ?? 0;
      if (shown < size) await sleep(500);
    }
    process.stderr.write('the ranking is projected\n');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/login`);
    await page.getByLabel('Email').fill('bench@rivals.test');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.url}/competitors`);
    await page.addInitScript({ content: installProbes });

    const renderMs: number[] = [];
    let htmlKb = 0;
    for (let i = 0; i < rounds; i++) {
      const t = performance.now();
      const response = await page.request.get(`${server.url}/ranking`);
      const body = await response.body();
      renderMs.push(performance.now() - t);
      htmlKb = body.length / 1024;
      if (!response.ok()) throw new Error(`GET /ranking answered ${response.status()}`);
    }

    const interactiveMs: number[] = [];
    const gaps: number[] = [];
    const longTasks: number[] = [];
    const settleMs: number[] = [];
    const settleLong: number[] = [];
    for (let i = 0; i < rounds; i++) {
      await page.goto(`${server.url}/ranking`);
      await page.waitForSelector('[data-sortable][data-sort-ready="true"]', { timeout: 120_000 });
      interactiveMs.push(await page.evaluate(() => (window as unknown as Probes).__probe.readyAt));
      const items = await page.locator('[data-sortable-list="ranking"] > .sortable-item').count();
      if (items !== size) throw new Error(`the ranking shows ${items} items, not ${size}`);
      const drag = await dragOnce(page, moves);
      const gap = summarize(drag.gaps);
      process.stderr.write(
        `round ${i + 1}: interactive ${interactiveMs.at(-1)?.toFixed(0)} ms, frame gap p50 ${gap.p50.toFixed(1)} p95 ${gap.p95.toFixed(1)} ms, long tasks ${drag.longTaskMs.toFixed(0)} ms, drop to ready ${drag.settleMs.toFixed(0)} ms\n`,
      );
      gaps.push(...drag.gaps);
      longTasks.push(drag.longTaskMs);
      settleMs.push(drag.settleMs);
      settleLong.push(drag.settleLongTaskMs);
    }
    const render = medianSpread(renderMs);
    const tti = medianSpread(interactiveMs);
    const frame = summarize(gaps);
    const long = medianSpread(longTasks);
    const settle = medianSpread(settleMs);
    report('drag-sort.scale', {
      items: size,
      rounds,
      html_kb: htmlKb,
      render_ms: render.median,
      render_spread: `${render.min.toFixed(0)}-${render.max.toFixed(0)}`,
      interactive_ms: tti.median,
      interactive_spread: `${tti.min.toFixed(0)}-${tti.max.toFixed(0)}`,
      drag_frames: frame.n,
      frame_gap_p50_ms: frame.p50,
      frame_gap_p95_ms: frame.p95,
      frame_gap_max_ms: frame.max,
      drag_longtask_ms: long.median,
      drag_longtask_spread: `${long.min.toFixed(0)}-${long.max.toFixed(0)}`,
      drop_to_ready_ms: settle.median,
      drop_to_ready_spread: `${settle.min.toFixed(0)}-${settle.max.toFixed(0)}`,
      settle_longtask_ms: medianSpread(settleLong).median,
    });
  } finally {
    await browser.close();
    await server.stop();
    await db.close().catch(() => undefined);
    await postgres.destroy();
  }
}

interface Probes {
  __probe: {
    readyAt: number;
    recording: boolean;
    frames: number[];
    long: { start: number; duration: number }[];
    droppedAt: number;
  };
}

/**
 * Runs in the page before its scripts: stamps readiness, records frames and long tasks. Plain
 * JavaScript in a string: tsx would wrap a compiled function's inner functions in a `__name` helper
 * that does not exist in the page, and the script would stop there.
 */
const installProbes = `
  const probe = { readyAt: NaN, recording: false, frames: [], long: [], droppedAt: NaN };
  window.__probe = probe;
  new MutationObserver(() => {
    if (Number.isNaN(probe.readyAt) && document.querySelector('[data-sortable][data-sort-ready="true"]'))
      probe.readyAt = performance.now();
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-sort-ready'] });
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) probe.long.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
  requestAnimationFrame(function frame(t) {
    if (probe.recording) probe.frames.push(t);
    requestAnimationFrame(frame);
  });
  document.addEventListener('pointerup', () => (probe.droppedAt = performance.now()), true);
`;

/** A drop that is not ready again by then is reported as `Infinity` (the round goes on). */
const SETTLE_TIMEOUT_MS = 180_000;

const nextFrame = (page: Page) =>
  page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => resolve())));

/**
 * Item 3's grip is taken and moved down across about 15 items and back up a little, one move per
 * frame, then dropped (a real save of the whole list and the re-render after it).
 */
async function dragOnce(page: Page, moves: number) {
  const list = page.locator('[data-sortable-list="ranking"] > .sortable-item');
  const from = await list.nth(2).locator('[data-drag-handle]').boundingBox();
  const far = await list.nth(17).boundingBox();
  if (!from || !far) throw new Error('nothing to drag');
  const x = from.x + from.width / 2;
  const y0 = from.y + from.height / 2;
  await page.mouse.move(x, y0);
  await page.evaluate(() => {
    const p = (window as unknown as Probes).__probe;
    p.frames = [];
    p.long = [];
    p.recording = true;
  });
  const started = await page.evaluate(() => performance.now());
  await page.mouse.down();
  await page.mouse.move(x + 4, y0 + 6, { steps: 2 });
  for (let i = 1; i <= moves; i++) {
    // Down to item 17 over the first two thirds of the moves, then back up by a few items.
    const f = i <= (moves * 2) / 3 ? i / ((moves * 2) / 3) : 1 - ((i - (moves * 2) / 3) / moves) * 0.6;
    await page.mouse.move(x + 4, y0 + (far.y + far.height / 2 - y0) * f);
    await nextFrame(page);
  }
  const dragged = await page.evaluate((since) => {
    const p = (window as unknown as Probes).__probe;
    p.recording = false;
    const gaps = p.frames.slice(1).map((t, i) => t - (p.frames[i] as number));
    const longTaskMs = p.long.filter((l) => l.start >= since).reduce((s, l) => s + l.duration, 0);
    p.long = [];
    return { gaps, longTaskMs };
  }, started);
  await page.mouse.up();
  const ready = await page
    .waitForSelector('[data-sortable][data-sort-ready="true"]:not([data-saving])', {
      state: 'attached',
      timeout: SETTLE_TIMEOUT_MS,
    })
    .then(
      () => true,
      () => false,
    );
  if (!ready) return { ...dragged, settleMs: Infinity, settleLongTaskMs: Infinity };
  const settled = await page.evaluate(() => {
    const p = (window as unknown as Probes).__probe;
    return {
      settleMs: performance.now() - p.droppedAt,
      settleLongTaskMs: p.long.filter((l) => l.start >= p.droppedAt).reduce((s, l) => s + l.duration, 0),
    };
  });
  return { ...dragged, ...settled };
}
