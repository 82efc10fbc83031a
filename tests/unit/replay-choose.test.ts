import { describe, expect, it } from 'vitest';
import { allProjections } from '#projections/all-projections.ts';
import { choose } from '#web/cli/replay-command.server.ts';

const names = (chosen: ReturnType<typeof choose>) => chosen.map((p) => p.name);

describe('replay --projection', () => {
  it('chooses every projection by default, for all, and for all among other names', () => {
    const every = allProjections.map((p) => p.name);
    expect(names(choose())).toEqual(every);
    expect(names(choose(['all']))).toEqual(every);
    // Said 'unknown projection "all, all"' before.
    expect(names(choose(['all', 'all']))).toEqual(every);
    expect(names(choose(['audit-log', 'all']))).toEqual(every);
  });

  it('chooses a name given twice once', () => {
    expect(names(choose(['audit-log', 'audit-log']))).toEqual(['audit-log']);
  });

  it('names each unknown projection once', () => {
    expect(() => choose(['nope', 'audit-log', 'nope'])).toThrow(/^--projection: unknown projection "nope";/);
    // Beside all too: a mistyped name is said, not swallowed by all (helper-51).
    expect(() => choose(['all', 'audit-lgo'])).toThrow(/^--projection: unknown projection "audit-lgo";/);
  });
});
