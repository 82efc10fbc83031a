import { execFileSync, spawn } from 'node:child_process';
import { lstat, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '#tests/support/run-cli.ts';

/**
 * A review of the operator commands' flags as a careless operator types them: an unset shell variable
 * (`--to-position "$N"`), a day the month does not have, a FIFO or a link as `--out`, a password file
 * with a second line or in the wrong encoding. Each is refused with the flag's name and exit 1, before
 * anything is written, or does what the operator meant. Each test starts several CLI processes, each
 * opening its own embedded database: minutes on a busy two-core CI machine.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('operator command flags', { timeout: 240_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rivals-cli-flags-'));
    expect((await cli(dir, ['migrate'])).code).toBe(0);
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  /** Each call exits 1 with its one-line reason on stderr, nothing on stdout and no stack trace. */
  async function expectRefused(cases: [string[], string][], stdin?: string | Buffer) {
    for (const [args, message] of cases) {
      const refused = await cli(dir, args, stdin);
      const what = JSON.stringify(args);
      expect(refused.code, what).toBe(1);
      expect(refused.stderr.split('\n')[0], what).toBe(message);
      expect(refused.stdout, what).toBe('');
      expect(refused.stderr, what).not.toMatch(/\n\s+at /);
    }
  }

  /** `users:add` of a viewer, its password from standard input. */
  const addArgs = (email: string, name: string) => [
    'users:add',
    '--email',
    email,
    '--name',
    name,
    '--role',
    'viewer',
    '--password-stdin',
  ];

  /** How many events of `type` the log holds, by the export itself. */
  async function exported(type: string): Promise<number> {
    const result = await cli(dir, ['events:export', '--type', type]);
    expect(result.code).toBe(0);
    return result.stdout.split('\n').filter(Boolean).length;
  }

  it('a number flag takes digits only: an empty, blank, hex or exponent value is refused, not read as 0 or 16', async () => {
    const position = 'Expected a whole number from 0 to 9,007,199,254,740,991.';
    const [rebuilt, added] = [await exported('ProjectionRebuilt'), await exported('CompetitorAdded')];
    await expectRefused([
      [
        ['replay', '--to-position', ''],
        `error: option '--to-position <n>' argument '' is invalid. ${position}`,
      ],
      [
        ['replay', '--to-position', ' ', '--dry-run'],
        `error: option '--to-position <n>' argument ' ' is invalid. ${position}`,
      ],
      [
        ['events:tail', '--limit', '0x10'],
        "error: option '--limit <n>' argument '0x10' is invalid. Expected a whole number from 1 to 10,000.",
      ],
      [
        ['events:verify', '--limit', '1e3'],
        "error: option '--limit <n>' argument '1e3' is invalid. Expected a whole number from 1 to 10,000.",
      ],
      [
        ['seed', '--competitors', '2', '--seed', ''],
        "error: option '--seed <n>' argument '' is invalid. Expected a whole number from 0 to 4,294,967,295.",
      ],
    ]);
    // Nothing was rebuilt nor seeded.
    expect(await exported('ProjectionRebuilt')).toBe(rebuilt);
    expect(await exported('CompetitorAdded')).toBe(added);
  });

  it('a day the month does not have is refused naming the flag, not rolled over into the next month', async () => {
    const time = 'Expected a date-time such as 2026-11-21T10:00:00Z.';
    await expectRefused([
      [
        ['replay', '--to-time', '2026-02-30'],
        `error: option '--to-time <time>' argument '2026-02-30' is invalid. ${time}`,
      ],
      [
        ['events:export', '--to', '2026-04-31T10:00:00Z'],
        `error: option '--to <position|time>' argument '2026-04-31T10:00:00Z' is invalid. Expected an event position (a whole number) or ${time.slice('Expected '.length)}`,
      ],
      [
        ['events:export', '--from', '2026-02-29'],
        `error: option '--from <position|time>' argument '2026-02-29' is invalid. Expected an event position (a whole number) or ${time.slice('Expected '.length)}`,
      ],
    ]);
    // A leap day is a day.
    const leap = await cli(dir, ['events:export', '--from', '2024-02-29T00:00:00Z']);
    expect(leap.code, leap.stderr).toBe(0);
  });

  it('an empty --out, --type or --stream is refused naming the flag, and nothing is exported', async () => {
    await expectRefused([
      [
        ['events:export', '--out', ''],
        "error: option '--out <file>' argument '' is invalid. Expected a file path.",
      ],
      [
        ['events:export', '--type', ''],
        "error: option '--type <types>' argument '' is invalid. Expected one or more names, comma-separated.",
      ],
      [
        ['events:export', '--type', ' , '],
        "error: option '--type <types>' argument ' , ' is invalid. Expected one or more names, comma-separated.",
      ],
      [
        ['events:export', '--stream', ''],
        "error: option '--stream <stream>' argument '' is invalid. Expected a stream name.",
      ],
    ]);
  });

  it('a repeated --projection rebuilds every one named, like a repeated --type', async () => {
    const dry = await cli(dir, [
      'replay',
      '--projection',
      'audit-log',
      '--projection',
      'user-list',
      '--dry-run',
      '--json',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    const summary = JSON.parse(dry.stdout) as { projections: { projection: string }[] };
    expect(summary.projections.map((p) => p.projection).sort()).toEqual(['audit-log', 'user-list']);
    await expectRefused([
      [
        ['replay', '--projection', ''],
        "error: option '--projection <names>' argument '' is invalid. Expected one or more names, comma-separated.",
      ],
    ]);
  });

  it('--out onto a FIFO writes into it, and it stays a FIFO', async () => {
    const fifo = path.join(dir, 'export.fifo');
    execFileSync('mkfifo', [fifo]);
    // The reader is a process of its own: if the FIFO were replaced, it would wait on it forever.
    const reader = spawn('cat', [fifo]);
    let received = '';
    reader.stdout.on('data', (d: Buffer) => (received += d.toString()));
    const readerDone = new Promise<boolean>((resolve) => reader.on('close', () => resolve(true)));
    const result = await cli(dir, ['events:export', '--out', fifo]);
    const readAll = await Promise.race([readerDone, sleep(5_000).then(() => false)]);
    if (!readAll) reader.kill();
    expect(readAll, 'the reader saw the end of the export').toBe(true);
    expect(result.code, result.stderr).toBe(0);
    const lines = received.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(0);
    expect(result.stderr).toContain(`Exported ${lines.length} events to ${fifo}.`);
    expect((await lstat(fifo)).isFIFO()).toBe(true);
  });

  it('--out through a symbolic link replaces the file it names and keeps the link', async () => {
    const real = path.join(dir, 'real.ndjson');
    const link = path.join(dir, 'link.ndjson');
    await writeFile(real, 'the previous export\n');
    await symlink(real, link);
    const result = await cli(dir, ['events:export', '--out', link]);
    expect(result.code, result.stderr).toBe(0);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    const lines = (await readFile(real, 'utf8')).split('\n').filter(Boolean);
    expect(result.stderr).toContain(`Exported ${lines.length} events to ${link}.`);
    expect(lines[0]).toMatch(/^\{"position":/);
  });

  // /dev/full exists on Linux, where Rivals runs and CI runs: no skip, a missing device fails loudly.
  it('--out onto a device (through a link to /dev/full) writes to the device and reports it full, leaving both in place', async () => {
    const link = path.join(dir, 'full.ndjson');
    await symlink('/dev/full', link);
    await expectRefused([
      [['events:export', '--out', link], `--out: cannot write ${link}: the disk is full`],
    ]);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect((await stat('/dev/full')).isCharacterDevice()).toBe(true);
  });

  it('users:add refuses a password no sign-in form could send: NUL, a second line, bytes that are not UTF-8', async () => {
    const add = addArgs('pw@example.test', 'Pw');
    const users = await exported('UserAdded');
    const control =
      'The password cannot contain control characters (such as NUL, tabs or line breaks) or broken characters.';
    await expectRefused([[add, control]], 'a-long-password\u0000x\n');
    await expectRefused([[add, control]], 'a-long-password\nsecond line\n');
    await expectRefused(
      [[add, 'The password on standard input is not UTF-8 text.']],
      Buffer.concat([Buffer.from('a-long-password-'), Buffer.from([0xe9, 0xe8]), Buffer.from('\n')]),
    );
    expect(await exported('UserAdded')).toBe(users);
    // A password with a final line break (echo, a file) is still the line.
    const added = await cli(dir, add, 'a-long-password-123\r\n');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('Added Pw <pw@example.test> as viewer.');
  });

  it('users:add refuses an --email or --name whose bytes are not UTF-8, naming the flag, instead of adding "Caf�"', async () => {
    const users = await exported('UserAdded');
    /** `users:add` with the shell's own bytes for `--email` and `--name` (`printf`: 0xE9 is Latin-1 é). */
    const addRaw = (via: string[], email: string, name: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          '/bin/sh',
          [
            '-c',
            `exec "$@" users:add --email "$(printf '${email}')" --name "$(printf '${name}')" --role viewer --password-stdin`,
            'sh',
            ...via,
          ],
          { cwd: root, env: { PATH: process.env.PATH ?? '', DATA_DIR: dir, LOG_LEVEL: 'warn' } },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end('a-long-password-123\n');
      });
    const holds = 'It holds "�" (U+FFFD), what bytes that are not UTF-8 are read as';
    // Straight into Node, and through the tsx launcher as `npm run cli` runs it (which passes the text on
    // already decoded): both see only "�".
    for (const via of [
      [process.execPath, '--import', 'tsx', 'web/cli.server.ts'],
      [path.join(root, 'node_modules/.bin/tsx'), 'web/cli.server.ts'],
    ]) {
      const name = await addRaw(via, 'latin@example.test', 'Caf\\351');
      expect(name.code, name.stderr).toBe(1);
      expect(name.stderr).toContain("option '--name <name>' argument");
      expect(name.stderr).toContain(holds);
      const email = await addRaw(via, 'caf\\351@example.test', 'Cafe');
      expect(email.code, email.stderr).toBe(1);
      expect(email.stderr).toContain("option '--email <email>' argument");
      expect(email.stderr).toContain(holds);
    }
    expect(await exported('UserAdded')).toBe(users);
    // The same name in UTF-8 is added as typed.
    const added = await addRaw(
      [process.execPath, '--import', 'tsx', 'web/cli.server.ts'],
      'utf8@example.test',
      'Caf\\303\\251',
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('Added Café <utf8@example.test> as viewer.');
    expect(await exported('UserAdded')).toBe(users + 1);
  });

  it('users:add on a standard input that does not end (`yes |`, `< /dev/zero`) refuses the password once it is too long, instead of reading on', async () => {
    const users = await exported('UserAdded');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'web/cli.server.ts', ...addArgs('endless@example.test', 'Endless')],
      { cwd: root, env: { PATH: process.env.PATH ?? '', DATA_DIR: dir, LOG_LEVEL: 'warn' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.on('error', () => undefined);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Like `yes`, but 16 MB at most (the command read all it was given, 3.5 GB in 15 s), and never closed.
    const chunk = Buffer.from('y\n'.repeat(32 * 1024));
    let gone = false;
    void exited.then(() => (gone = true));
    for (let sent = 0; sent < 16 * 1024 * 1024 && !gone; sent += chunk.length) {
      if (!child.stdin.write(chunk))
        await Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited]);
    }
    const stop = new AbortController();
    const code = await Promise.race([
      exited,
      sleep(60_000, 'still reading after 60 s' as const, { signal: stop.signal }).catch(
        () => 'exited' as const,
      ),
    ]);
    stop.abort();
    if (!gone) child.kill('SIGKILL');
    expect(code, stderr).toBe(1);
    expect(stderr.split('\n')[0]).toBe('The password must be at most 1024 characters.');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toBe('');
    expect(await exported('UserAdded')).toBe(users);
  });

  it('users:set-password names the flag for a user that does not exist, refuses a password sign-in could not take, and records a reset', async () => {
    const email = 'reset@example.test';
    const added = await cli(dir, addArgs(email, 'Reset'), 'the-first-password-1\n');
    expect(added.code, added.stderr).toBe(0);
    const set = (who: string) => ['users:set-password', '--email', who, '--password-stdin'];
    await expectRefused(
      [
        [set('nobody@example.test'), '--email: there is no user with the email nobody@example.test.'],
        [set('not an email'), '--email: Enter a valid email address.'],
      ],
      'the-second-password-2\n',
    );
    await expectRefused([[set(email), 'The password must be at least 12 characters.']], 'short\n');
    expect(await exported('UserPasswordReset')).toBe(0);
    const reset = await cli(dir, set(email), 'the-second-password-2\n');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toBe(`Set a new password for <${email}>; 0 sessions signed out.\n`);
    expect(await exported('UserPasswordReset')).toBe(1);
  });
});
