import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieNames } from '#web/auth/cookies.server.ts';
import { envelope } from '#tests/support/runtime-pieces.ts';
import { freshUser, messageOf, waitFor } from '#tests/security/support/helpers.ts';
import {
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from '#tests/security/support/security-app.ts';
import { TEST_PASSWORD, testEmails } from '#tests/support/test-app.ts';
import { TestClient } from '#tests/support/test-client.ts';

/*
 * The whole input space of sign-in and sign-out: every request gets a clear 4xx a person can act on, or
 * the right redirect; never a 500; and a refused one leaves nothing behind (no session row, no cookie).
 * Found by this pass (each case failed before its fix): a missing email or password, and a field sent
 * twice or not as text (email[]=a&email[]=b, JSON numbers), read as "Email or password is incorrect." and
 * were counted as failed guesses; an email with a dotted capital İ (U+0130) for its i signed in as that
 * user (the databases' lower() folds İ to i); GET /logout and PUT /login answered a bare "Method Not
 * Allowed" in plain text.
 */

const names = cookieNames(false);
const FORM = 'application/x-www-form-urlencoded';
const INCORRECT = 'Email or password is incorrect.';
const NOT_UTF8 = 'The form is not UTF-8 text';
const SHAPE = /field came more than once or not as text\. Sign in from the page's form\./;

interface Case {
  name: string;
  /** A form body (fields, in order, repeats allowed) or, for `json`, any value. */
  body: [string, string][] | { json: unknown } | { raw: string; type: string };
  method?: string;
  status: number;
  /** Text the answer shows (page or JSON message). */
  says?: string | RegExp;
  /** For a 302: where to. */
  location?: string;
}

const admin = (password = TEST_PASSWORD): [string, string][] => [
  ['email', testEmails.admin],
  ['password', password],
];
const big = (n: number) => 'a'.repeat(n);

const cases: Case[] = [
  // Fields missing, doubled, in the wrong shape.
  { name: 'no email', body: [['password', 'x']], status: 400, says: 'Enter your email.' },
  { name: 'no password', body: [['email', testEmails.admin]], status: 400, says: 'Enter your password.' },
  { name: 'nothing at all', body: [], status: 400, says: 'Enter your email.' },
  {
    name: 'email twice',
    body: [['email', 'a@b.c'], ...admin()],
    status: 400,
    says: SHAPE,
  },
  {
    name: 'email[] twice',
    body: [['email[]', 'a@b.c'], ['email[]', testEmails.admin], admin()[1] as [string, string]],
    status: 400,
    says: SHAPE,
  },
  {
    name: 'email[x] (an object)',
    body: [
      ['email[x]', 'a'],
      ['password', 'p'],
    ],
    status: 400,
    says: SHAPE,
  },
  { name: 'next twice', body: [...admin(), ['next', '/a'], ['next', '/b']], status: 400, says: SHAPE },
  // JSON bodies: read like the form; wrong shapes said so.
  {
    name: 'JSON with the right fields',
    body: { json: { email: testEmails.admin, password: TEST_PASSWORD } },
    status: 302,
    location: '/competitors',
  },
  { name: 'JSON email as a number', body: { json: { email: 5, password: 'x' } }, status: 400, says: SHAPE },
  {
    name: 'JSON email as a list',
    body: { json: { email: [testEmails.admin], password: TEST_PASSWORD } },
    status: 400,
    says: SHAPE,
  },
  {
    name: 'JSON null password',
    body: { json: { email: 'a@b.c', password: null } },
    status: 400,
    says: SHAPE,
  },
  { name: 'JSON array body', body: { json: [1, 2] }, status: 400, says: 'Enter your email.' },
  // Sizes.
  {
    name: 'email of 300 characters',
    body: [
      ['email', `${big(300)}@x.io`],
      ['password', 'x'],
    ],
    status: 400,
    says: 'Email must be at most 254 characters.',
  },
  {
    name: 'password of 1,025 characters',
    body: admin(big(1025)),
    status: 400,
    says: 'Password must be at most 1024 characters.',
  },
  {
    name: 'email of 1 MB',
    body: [
      ['email', big(1_000_000)],
      ['password', 'x'],
    ],
    status: 413,
    says: /too large: at most 64 kB/,
  },
  {
    name: 'JSON of 1 MB',
    body: { json: { email: testEmails.admin, password: big(1_000_000) } },
    status: 413,
    says: /too large: at most 64 kB/,
  },
  // Control characters and broken text.
  {
    name: 'NUL in the email',
    body: [
      ['email', 'ad\u0000min@rivals.test'],
      ['password', 'x'],
    ],
    status: 400,
    says: 'Email cannot contain control characters',
  },
  {
    name: 'a line break in the email',
    body: [
      ['email', `${testEmails.admin}\n`],
      ['password', TEST_PASSWORD],
    ],
    status: 400,
    says: 'Email cannot contain control characters',
  },
  { name: 'NUL in the password', body: admin('x\u0000y'), status: 401, says: INCORRECT },
  // A form whose escapes are not UTF-8 is not read at all (web/middleware/body-limits.server.ts): the
  // answer says so, and nothing is counted or signed in.
  {
    name: 'invalid UTF-8 (%C3%28) in the email',
    body: { raw: 'email=%C3%28%40rivals.test&password=x', type: FORM },
    status: 400,
    says: NOT_UTF8,
  },
  {
    name: 'invalid UTF-8 (%C3%28) in the password',
    body: { raw: `email=${encodeURIComponent(testEmails.admin)}&password=%C3%28`, type: FORM },
    status: 400,
    says: NOT_UTF8,
  },
  {
    name: 'invalid UTF-8 (%C3%28) in next',
    body: {
      raw: `email=${encodeURIComponent(testEmails.admin)}&password=${TEST_PASSWORD}&next=%C3%28`,
      type: FORM,
    },
    status: 400,
    says: NOT_UTF8,
  },
  // Spelling of the email.
  {
    name: 'the email in capitals',
    body: [
      ['email', testEmails.admin.toUpperCase()],
      ['password', TEST_PASSWORD],
    ],
    status: 302,
  },
  {
    name: 'spaces around the email',
    body: [
      ['email', ` ${testEmails.admin}\u00a0`],
      ['password', TEST_PASSWORD],
    ],
    status: 302,
  },
  {
    name: 'the email in fullwidth letters (its NFKC form is the address; we do not fold it)',
    body: [
      ['email', testEmails.admin.replace('admin', 'ａｄｍｉｎ')],
      ['password', TEST_PASSWORD],
    ],
    status: 401,
    says: INCORRECT,
  },
  {
    name: 'a dotted capital İ for i',
    body: [
      ['email', testEmails.admin.replace('admin', 'admİn')],
      ['password', TEST_PASSWORD],
    ],
    status: 401,
    says: INCORRECT,
  },
  // Where to go next: only our own paths.
  ...(
    [
      ['//evil.example', '/competitors'],
      ['/\\evil.example', '/competitors'],
      ['https://evil.example', '/competitors'],
      ['javascript:alert(1)', '/competitors'],
      ['%2F%2Fevil.example', '/competitors'],
      ['/%2F%2Fevil.example', '/%2F%2Fevil.example'],
      ['/%5Cevil.example', '/%5Cevil.example'],
      ['/\t/evil.example', '/competitors'],
      ['/ranking?x=1#top', '/ranking?x=1'],
    ] as const
  ).map(([next, location]) => ({
    name: `next ${JSON.stringify(next)}`,
    body: [...admin(), ['next', next]] as [string, string][],
    status: 302,
    location,
  })),
  // Bodies and methods the route does not take.
  { name: 'text/plain', body: { raw: 'email=a', type: 'text/plain' }, status: 415, says: 'Send forms as' },
  {
    name: 'multipart',
    body: {
      raw: '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\na\r\n--x--\r\n',
      type: 'multipart/form-data; boundary=x',
    },
    status: 415,
    says: 'Send forms as',
  },
  {
    name: 'broken JSON',
    body: { raw: '{"email":', type: 'application/json' },
    status: 400,
    says: 'could not be read',
  },
  { name: 'PUT', method: 'PUT', body: admin(), status: 405, says: 'does not take PUT requests' },
  { name: 'DELETE', method: 'DELETE', body: admin(), status: 405, says: 'does not take DELETE requests' },
];

describe.each(securityBackends)('sign-in input space, on %s', (backend) => {
  let app: SecurityApp;
  /** Each request from an address of its own (TRUST_PROXY=http), so no case eats another's sign-in limit. */
  let address = 0;

  beforeAll(async () => {
    app = await startSecurityApp(backend, { env: { TRUST_PROXY: 'http' } });
  });
  afterAll(() => app.close());

  const sessionCount = async () =>
    (await app.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions')).rows[0]?.n ?? -1;

  /** A browser on the sign-in page sends `body` to `path` with its token (header and field). */
  async function send(path: string, body: Case['body'], method = 'POST') {
    const client = new TestClient(app.url);
    await client.get('/login');
    address += 1;
    const headers: Record<string, string> = {
      Cookie: client.cookieHeader(),
      Origin: app.url,
      'X-CSRF-Token': client.csrfToken,
      'X-Forwarded-For': `10.48.${address >> 8}.${address & 255}`,
    };
    let payload: string;
    if (Array.isArray(body)) {
      const form = new URLSearchParams([...body, ['_csrf', client.csrfToken]]);
      payload = form.toString();
      headers['Content-Type'] = FORM;
    } else if ('json' in body) {
      payload = JSON.stringify(body.json);
      headers['Content-Type'] = 'application/json';
    } else {
      payload = body.raw;
      headers['Content-Type'] = body.type;
    }
    return fetch(`${app.url}${path}`, { method, headers, body: payload, redirect: 'manual' });
  }

  it.each(cases)('POST /login: $name', async (c) => {
    const before = await sessionCount();
    const answer = await send('/login', c.body, c.method);
    const message = await messageOf(answer.clone());
    expect(answer.status, message).toBe(c.status);
    if (typeof c.says === 'string') expect(message).toContain(c.says);
    else if (c.says) expect(message).toMatch(c.says);
    const sessionCookie = answer.headers.getSetCookie().find((line) => line.startsWith(`${names.session}=`));
    if (c.status === 302) {
      expect(answer.headers.get('location')).toBe(c.location ?? '/competitors');
      expect(sessionCookie).toBeTruthy();
      expect(await sessionCount()).toBe(before + 1);
    } else {
      expect(sessionCookie).toBeUndefined();
      expect(await sessionCount()).toBe(before);
    }
  });

  it('a missing or doubled field is not counted as a failed sign-in', async () => {
    // Six refusals of one account from one address: were the limit (5 a minute) counting them, the
    // right password would then be refused with 429.
    const client = new TestClient(app.url);
    await client.get('/login');
    const headers = { 'X-Forwarded-For': '10.48.250.1' };
    for (let i = 0; i < 6; i += 1) {
      const refused = await client.postForm('/login', { email: testEmails.admin }, { headers });
      expect(refused.status).toBe(400);
    }
    const ok = await client.postForm(
      '/login',
      { email: testEmails.admin, password: TEST_PASSWORD },
      { headers },
    );
    expect(ok.status).toBe(302);
  });

  it('a Kelvin sign (U+212A) for a k is the letter K (NFC, as all sign-in text), on both backends', async () => {
    const user = await freshUser(app, 'viewer', 'kelvin');
    expect(user.email).toContain('k');
    const client = new TestClient(app.url);
    await client.get('/login');
    const answer = await client.postForm(
      '/login',
      { email: user.email.replace('k', '\u212a'), password: TEST_PASSWORD },
      { headers: { 'X-Forwarded-For': '10.48.251.1' } },
    );
    expect(answer.status).toBe(302);
  });

  it('a disabled user, or one disabled between the form and the post, is refused like a wrong password', async () => {
    const user = await freshUser(app, 'viewer', 'disabled-between');
    const client = new TestClient(app.url);
    await client.get('/login');
    const disabled = await app.runtime.route(envelope({ type: 'DisableUser', payload: { userId: user.id } }));
    expect(disabled.status).toBe('accepted');
    await app.runtime.store.notifyAppended();
    await waitFor(async () => {
      const { rows } = await app.db.pool.query<{ disabled: boolean }>(
        'SELECT disabled FROM user_list WHERE id = $1',
        [user.id],
      );
      return rows[0]?.disabled === true;
    }, 'the user disabled');
    const before = await sessionCount();
    const answer = await client.postForm(
      '/login',
      { email: user.email, password: TEST_PASSWORD },
      { headers: { 'X-Forwarded-For': '10.48.252.1' } },
    );
    expect(answer.status).toBe(401);
    expect(await messageOf(answer)).toContain(INCORRECT);
    expect(await sessionCount()).toBe(before);
  });

  it('the sign-in limit answers 429 with when to try again, and signs nobody in', async () => {
    const client = new TestClient(app.url);
    await client.get('/login');
    const headers = { 'X-Forwarded-For': '10.48.253.1' };
    for (let i = 0; i < 5; i += 1)
      expect(
        (await client.postForm('/login', { email: testEmails.viewer, password: 'wrong' }, { headers }))
          .status,
      ).toBe(401);
    const before = await sessionCount();
    const limited = await client.postForm(
      '/login',
      { email: testEmails.viewer, password: TEST_PASSWORD },
      { headers },
    );
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await messageOf(limited)).toMatch(/Too many failed sign-ins\. Try again in \d+ seconds?\./);
    expect(await sessionCount()).toBe(before);
  });

  it('GET, HEAD and PUT on the sign-out route say what to do; a sign-out with any body lands signed out', async () => {
    const visit = await fetch(`${app.url}/logout`, { redirect: 'manual' });
    expect(visit.status).toBe(405);
    expect(visit.headers.get('allow')).toContain('POST');
    expect(await messageOf(visit)).toContain("Go back and use the page's button.");
    const head = await fetch(`${app.url}/logout`, { method: 'HEAD', redirect: 'manual' });
    expect(head.status).toBe(405);
    const put = await send('/logout', [], 'PUT');
    expect(put.status).toBe(405);
    expect(await messageOf(put)).toContain('does not take PUT requests');
    for (const body of [
      { raw: 'x=1&x=2&_csrf[]=a', type: FORM },
      { json: { anything: [1, 2, 3] } },
    ] as Case['body'][]) {
      const user = await freshUser(app, 'viewer', 'sign-out-bodies');
      await user.client.get('/competitors');
      const payload = 'raw' in body ? body.raw : JSON.stringify((body as { json: unknown }).json);
      const answer = await fetch(`${app.url}/logout`, {
        method: 'POST',
        headers: {
          Cookie: user.client.cookieHeader(),
          Origin: app.url,
          'X-CSRF-Token': user.client.csrfToken,
          'Content-Type': 'raw' in body ? body.type : 'application/json',
        },
        body: payload,
        redirect: 'manual',
      });
      expect(answer.status).toBe(302);
      expect(answer.headers.get('location')).toBe('/login');
      const { rows } = await app.db.pool.query('SELECT 1 FROM sessions WHERE user_id = $1', [user.id]);
      expect(rows).toEqual([]);
    }
  });
});
