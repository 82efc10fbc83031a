import type { Reporter, TestModule } from 'vitest/node';

/** Prints `N passed, N failed` on its own line at the end of a run, for CI to read. */
export default class CountReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file's or a suite's own error (a beforeAll or afterAll threw) skips or outlives its tests: one
      // failure each, or a run that failed printed "0 failed".
      if (
        module.errors().length > 0 ||
        (module.state() === 'failed' && [...module.children.allTests()].length === 0)
      )
        failed++;
      for (const suite of module.children.allSuites()) if (suite.errors().length > 0) failed++;
    }
    failed += errors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
