import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { competitorListProjection } from '#projections/competitor-list/competitor-list.projection.ts';
import { cli } from '#tests/support/run-cli.ts';

// Each test starts several CLI processes, each opening and migrating its own embedded database:
// minutes on a busy two-core CI machine.
describe('operator commands', { timeout: 240_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cli-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('migrate applies once, then nothing', async () => {
    const first = await cli(dir, ['migrate']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^Applied 001_event_store, .*005_notify_after_commit(, \d{3}_\w+)* to embedded Postgres/,
    );
    const again = await cli(dir, ['migrate']);
    expect(again.stdout).toMatch(/^Nothing to apply; .* is up to date\./);
  });

  it('seed adds competitors through the bulk path and projects them', async () => {
    const seeded = await cli(dir, ['seed', '--competitors', '25', '--seed', '7']);
    expect(seeded.code).toBe(0);
    expect(seeded.stdout).toContain('Appended 25 competitors');
    expect(seeded.stdout).toContain('Projections are up to date.');
    const status = await cli(dir, ['projections:status']);
    // The version the code builds (bumped with the projection: 0024's text folding made it 2).
    expect(status.stdout).toMatch(
      new RegExp(
        `competitor-list\\s+v${competitorListProjection.version}\\s+position\\s+\\d+\\s+behind\\s+[01]\\b`,
      ),
    );
  });

  it('users:add reads the password from stdin and refuses bad flags naming them', async () => {
    const added = await cli(
      dir,
      ['users:add', '--email', 'Ops@Example.test', '--name', 'Ops', '--role', 'editor', '--password-stdin'],
      'a-long-password-123\n',
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('Added Ops <ops@example.test> as editor.');
    const duplicate = await cli(
      dir,
      ['users:add', '--email', 'ops@example.test', '--name', 'Ops', '--role', 'editor', '--password-stdin'],
      'a-long-password-123\n',
    );
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('A user with this email already exists.');
    const badRole = await cli(dir, [
      'users:add',
      '--email',
      'x@example.test',
      '--name',
      'X',
      '--role',
      'boss',
    ]);
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain(
      "option '--role <role>' argument 'boss' is invalid. Expected one of: viewer, editor, admin.",
    );
    const short = await cli(
      dir,
      ['users:add', '--email', 'y@example.test', '--name', 'Y', '--role', 'viewer', '--password-stdin'],
      'short\n',
    );
    expect(short.stderr.trim()).toBe('The password must be at least 12 characters.');
    const count = await cli(dir, ['seed', '--competitors', 'lots']);
    expect(count.stderr).toContain(
      "option '--competitors <n>' argument 'lots' is invalid. Expected a whole number from 1 to 10,000,000.",
    );
  });

  it('replay rebuilds blue-green (a dry run finds no differences) and is recorded in the log', async () => {
    const dry = await cli(dir, ['replay', '--projection', 'competitor-list', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/Dry run: would rebuild competitor-list from \d+ events; 0 differing rows\./);
    const real = await cli(dir, ['replay']);
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(/Rebuilt audit-log from \d+ events\.\n/);
    expect(real.stdout).toMatch(/projection\s+events\s+rows\s+seconds/);
    expect(real.stdout).toMatch(/competitor-list\s+[\d,]+\s+[\d,]+\s+[\d.]+/);
    const tail = await cli(dir, ['events:tail', '--limit', '6']);
    expect(tail.stdout.match(/ProjectionRebuilt/g)?.length).toBeGreaterThanOrEqual(5);
    // Its own records are projected too (the audit log shows them): a replay left every projection
    // behind by them until the app next ran, and projections:status said "behind 5" right after it.
    const status = await cli(dir, ['projections:status']);
    const lines = status.stdout.split('\n').filter((line) => /\sv\d+\s+position\s/.test(line));
    expect(lines).toHaveLength(5);
    // In events and in seconds, as /ops says it.
    for (const line of lines) expect(line).toMatch(/behind\s+0 events, 0 s\s/);
  });

  it('events:verify finds the log consistent', async () => {
    const verified = await cli(dir, ['events:verify']);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^The log is consistent: checked \d+ events in \d+ streams/);
  });

  it('events:export writes the whole log as NDJSON in commit order', async () => {
    const file = path.join(dir, 'events.ndjson');
    const exported = await cli(dir, ['events:export', '--out', file]);
    expect(exported.code).toBe(0);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { position: number; type: string });
    expect(exported.stderr).toContain(`Exported ${lines.length} events`);
    expect(lines[0]?.type).toBe('SegmentAdded');
    expect(lines.filter((e) => e.type === 'CompetitorAdded')).toHaveLength(25);
    expect(new Set(lines.map((e) => e.position)).size).toBe(lines.length);
  });

  it('events:export refuses bad flags naming them, and an output it cannot write leaves files as they were', async () => {
    const kept = path.join(dir, 'kept.ndjson');
    await writeFile(kept, 'the previous export\n');
    const refusals: [string[], string][] = [
      [['--out', dir], `--out: cannot write ${dir}: it is a folder`],
      [
        ['--out', path.join(dir, 'missing', 'x.ndjson')],
        `--out: cannot write ${path.join(dir, 'missing', 'x.ndjson')}: its folder does not exist`,
      ],
      [['--out', kept, '--type', 'Nope'], '--type: unknown event type Nope; known types: '],
      [['--out', kept, '--from', '10', '--to', '3'], '--from is after --to: no event can match; swap them.'],
      [
        ['--out', kept, '--from', '99999999999999999999999'],
        "option '--from <position|time>' argument '99999999999999999999999' is invalid. Expected an event position up to 9,007,199,254,740,991.",
      ],
      [['--out', kept, '--to', '5x'], "option '--to <position|time>' argument '5x' is invalid."],
    ];
    for (const [flags, message] of refusals) {
      const refused = await cli(dir, ['events:export', ...flags]);
      expect(refused.code, flags.join(' ')).toBe(1);
      expect(refused.stderr, flags.join(' ')).toContain(message);
      expect(refused.stderr, flags.join(' ')).not.toMatch(/\n\s+at /);
    }
    expect(await readFile(kept, 'utf8')).toBe('the previous export\n');
    expect((await readdir(dir)).filter((f) => f.endsWith('.partial'))).toEqual([]);
    const replay = await cli(dir, ['replay', '--to-time', '5']);
    expect(replay.stderr).toContain(
      "option '--to-time <time>' argument '5' is invalid. Expected a date-time such as 2026-11-21T10:00:00Z.",
    );
    // A past state is for comparing: put live, the live runner would project the rest at once.
    const events = async () => (await cli(dir, ['events:tail', '--limit', '1'])).stdout;
    const before = await events();
    for (const limit of [
      ['--to-position', '3'],
      ['--to-time', '2026-01-01T00:00:00Z'],
    ]) {
      const live = await cli(dir, ['replay', ...limit]);
      expect(live.code, limit.join(' ')).toBe(1);
      expect(live.stderr.trim()).toBe(
        '--to-position and --to-time need --dry-run: they build a past state to compare with the live tables; a rebuild that is put live always goes to the newest event.',
      );
    }
    // Refused before anything was done: not even a ProjectionRebuilt event.
    expect(await events()).toBe(before);
    // Sign-in refuses passwords over 1,024 characters: none may be set here either.
    const long = await cli(
      dir,
      ['users:add', '--email', 'long@example.test', '--name', 'Long', '--role', 'viewer', '--password-stdin'],
      `${'x'.repeat(1025)}\n`,
    );
    expect(long.code).toBe(1);
    expect(long.stderr.trim()).toBe('The password must be at most 1024 characters.');
  });
});
