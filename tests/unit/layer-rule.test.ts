import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * The layer rule in eslint.config.js really fires. Each case lints one import line as if it were a file
 * at `filePath`, with the repository's config (type-aware rules off: the file does not exist, and only
 * `no-restricted-imports` is under test), and expects that rule's error or none.
 */
const eslint = new ESLint({
  cwd: fileURLToPath(new URL('../..', import.meta.url)),
  overrideConfig: tseslint.configs.disableTypeChecked,
});

async function restrictedImports(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${source}';\nexport const y = x;\n`, {
    filePath,
  });
  if (!result) throw new Error(`no lint result for ${filePath}`);
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const forbidden: [file: string, source: string][] = [
  // The case the old glob patterns missed: a `#` alias (a comment in gitignore syntax).
  ['projections/competitor-list/fixture.ts', '#services/decider.ts'],
  ['projections/competitor-list/fixture.ts', '../../services/decider.ts'],
  ['projections/fixture.ts', '#web/render.server.tsx'],
  ['services/competitor/fixture.ts', '#projections/watcher.ts'],
  ['services/fixture.ts', '../projections/watcher.ts'],
  ['services/fixture.ts', '#web/app.server.ts'],
  ['events/competitor/fixture.ts', '#services/decider.ts'],
  ['events/fixture.ts', '../projections/projection.ts'],
  ['infra/db/fixture.ts', '#events/command.ts'],
  ['infra/fixture.ts', '../web/app.server.ts'],
  ['web/pages/fixture.tsx', '#tests/support/test-app.ts'],
  ['services/fixture.ts', '../tests/support/test-app.ts'],
  // Browser code never imports server modules.
  ['web/client/fixture.ts', '#infra/config.ts'],
  ['web/client/fixture.ts', '#services/decider.ts'],
  ['web/client/fixture.ts', '#projections/watcher.ts'],
  ['web/client/fixture.ts', '#events/store/event-store.ts'],
  ['web/client/fixture.ts', '../../events/bus/command-bus.ts'],
  ['web/client/fixture.ts', '../auth/sessions.server.ts'],
  ['web/components/fixture.tsx', '#web/render.server.tsx'],
  ['web/components/data-table/fixture.tsx', 'node:fs'],
];

const allowed: [file: string, source: string][] = [
  ['web/pages/fixture.tsx', '#services/decider.ts'],
  ['web/pages/fixture.tsx', '#projections/watcher.ts'],
  ['web/fixture.ts', '#events/command.ts'],
  ['services/fixture.ts', '#events/command.ts'],
  ['services/competitor/fixture.ts', '../decider.ts'],
  ['projections/fixture.ts', '#events/envelope.ts'],
  ['projections/fixture.ts', '#infra/assert-never.ts'],
  ['events/fixture.ts', '#infra/logger.ts'],
  ['infra/db/fixture.ts', '../config.ts'],
  ['web/client/fixture.ts', '#events/competitor/fields.ts'],
  ['web/client/fixture.ts', './notices.ts'],
  ['tests/unit/fixture.ts', '#services/decider.ts'],
];

describe('layer rule (no-restricted-imports in eslint.config.js)', { timeout: 30_000 }, () => {
  // Loading the config and its plugins is the slow part; done once, before any case.
  beforeAll(async () => {
    await eslint.lintText('export {};\n', { filePath: 'infra/warm-up.ts' });
  }, 120_000);

  it.each(forbidden)('%s importing %s is an error', async (file, source) => {
    const messages = await restrictedImports(file, source);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('(see ARCHITECTURE.md)');
  });

  it.each(allowed)('%s importing %s is allowed', async (file, source) => {
    expect(await restrictedImports(file, source)).toEqual([]);
  });
});
