import type { FullConfig, FullResult, Reporter, Suite, TestError } from '@playwright/test/reporter';

/**
 * Prints `N passed, N failed` on its own line at the end of a Playwright run, for CI to read (the
 * Playwright twin of count-reporter.ts). Errors outside tests (global setup, a worker fixture that
 * cannot start) count as failures, and so does a run that ended badly without a failed test.
 */
export default class PlaywrightCountReporter implements Reporter {
  private root: Suite | undefined;
  private errors = 0;

  onBegin(_config: FullConfig, suite: Suite): void {
    this.root = suite;
  }

  onError(_error: TestError): void {
    this.errors++;
  }

  onEnd(result: FullResult): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const test of this.root?.allTests() ?? []) {
      switch (test.outcome()) {
        case 'expected':
        case 'flaky':
          passed++;
          break;
        case 'unexpected':
          failed++;
          break;
        case 'skipped':
          skipped++;
          break;
      }
    }
    failed += this.errors;
    if (result.status !== 'passed' && failed === 0) failed = 1;
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
