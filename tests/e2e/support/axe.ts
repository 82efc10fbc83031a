import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect } from './fixtures.ts';

/**
 * The accessibility check of a page as it is now (WCAG 2.0 and 2.1, A and AA, as axe-core checks it),
 * for tests/e2e/accessibility.spec.ts and for specs whose screens need a server of their own (ops).
 * A violation fails the test with one line per element: rule, impact, selector and what the rule asks.
 */

const wcagTags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Rules of moderate or minor impact the specs let pass, each with the reason. A serious or critical
 * violation fails whatever is listed here. Empty: every rule axe runs for these tags must pass.
 */
const excusedRules: Readonly<Record<string, string>> = {};

const blocking = (impact: string | null | undefined, rule: string) =>
  impact === 'serious' || impact === 'critical' || !(rule in excusedRules);

export async function expectNoViolations(page: Page, screen: string): Promise<void> {
  // A page as it stays, not mid-animation: SweetAlert2 fades a dialog in, and axe measuring its buttons
  // while half transparent found their contrast at 3.6:1 (1 run in 5 at stop 26's code, 4 in 5 on a quiet
  // machine). Endless animations (a spinner) are not waited for.
  await page.waitForFunction(() =>
    document
      .getAnimations()
      .every((a) => a.playState !== 'running' || a.effect?.getComputedTiming().endTime === Infinity),
  );
  // Run time: only violations are collected (not passes and "needs review"), and axe runs in the page
  // itself instead of merging frame results in a blank page of its own ("legacy mode"; the app has no
  // iframes for the other mode to reach).
  const { violations } = await new AxeBuilder({ page })
    .withTags(wcagTags)
    .options({ resultTypes: ['violations'] })
    .setLegacyMode(true)
    .analyze();
  const lines: string[] = [];
  for (const v of violations.filter((v) => blocking(v.impact, v.id))) {
    for (const node of v.nodes) {
      const selector = node.target.map(String).join(' ');
      lines.push(
        `  ${v.id} (${v.impact ?? 'unknown'}) at ${selector}: ${v.help}\n    ${node.failureSummary ?? ''}`,
      );
    }
  }
  // Soft: one run lists the violations of every screen, not only of the first.
  expect
    .soft(lines, `${screen}: ${lines.length} accessibility violation(s):\n${lines.join('\n')}`)
    .toEqual([]);
}
