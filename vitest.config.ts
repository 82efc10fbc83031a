import { defineConfig } from 'vitest/config';

/**
 * `npm test` (tests/run-all.ts) passes a seed: files then run in a shuffled order, so every file must pass
 * alone and in any order (the tests inside a file keep their written order: see tests/run-all.ts). Set
 * here, per project, because `--sequence.*` on the command line replaces each project's `sequence`, group
 * order included.
 */
const seed = Number(process.env.RIVALS_TEST_SEED) || undefined;
const order = (groupOrder: number) => ({ groupOrder, ...(seed ? { shuffle: true, seed } : {}) });

export default defineConfig({
  test: {
    reporters: ['default', './tests/support/count-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['tests/unit/**/*.test.{ts,tsx}'],
          sequence: order(0),
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.test.{ts,tsx}'],
          globalSetup: ['tests/support/vitest-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // Two cores: integration files share Postgres and Redis; two at a time keeps them honest and fast.
          maxWorkers: 2,
          sequence: order(1),
        },
      },
      {
        extends: true,
        test: {
          name: 'security',
          include: ['tests/security/**/*.test.ts'],
          globalSetup: ['tests/support/vitest-global-setup.ts'],
          testTimeout: 120_000,
          // Each file starts a whole app per backend; on a loaded two-core machine that alone can take a minute.
          hookTimeout: 180_000,
          maxWorkers: 2,
          sequence: order(1),
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster-wide',
          include: ['tests/cluster-wide/**/*.test.ts'],
          globalSetup: ['tests/support/vitest-global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // These hold a transaction open on the shared Postgres cluster. Before decision 0028 any such
          // transaction held back every reader of every test database's log; now only one that writes the
          // log holds back, and only its own database's readers. They still run alone, after the
          // integration and security files, so that a regression of that rule shows here and nowhere else.
          maxWorkers: 1,
          sequence: order(2),
        },
      },
      {
        extends: true,
        test: {
          name: 'fault',
          include: ['tests/fault/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 60_000,
          // Fault tests start and kill real worker processes: one file at a time, after the other projects.
          maxWorkers: 1,
          sequence: order(3),
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['tests/cluster/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 240_000,
          // Its own Postgres, Redis, nginx and four app processes: alone, after everything else.
          maxWorkers: 1,
          sequence: order(4),
        },
      },
    ],
  },
});
