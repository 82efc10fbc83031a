import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteColumns } from '#events/competitor/fields.ts';
import { appRoutes } from '#web/app.server.ts';
import { TestClient } from '#tests/support/test-client.ts';
import { waitFor } from './support/helpers.ts';
import { almostValid, createFigures, headerString, hostileString, pathSegment } from './support/hostile.ts';
import {
  handshakeResult,
  securityBackends,
  startSecurityApp,
  type SecurityApp,
} from './support/security-app.ts';

/**
 * Fuzzing every outside input with fast-check, on both backends: every route parameter, query
 * parameter, form field and component payload, and the Socket.IO handshake (cookie, Origin, auth,
 * query, over WebSocket (long-polling is refused), plus raw Engine.IO requests). Never a 5xx; a socket connects
 * only with a real session from our own origin; every write the app accepted is in the event log; an
 * unhandled error anywhere in the server fails the run (vitest reports it). Run counts are modest (the suite stays well under two minutes);
 * the figures are printed as `SECURITY <backend> class=…` lines.
 */
const RUNS = Number(process.env.SECURITY_FUZZ_RUNS ?? 25);
const REFUSALS = new Set(['sign in first', 'forbidden origin']);

describe.each(securityBackends)('fuzz on %s', (backend) => {
  let app: SecurityApp;
  let admin: TestClient;
  let editor: TestClient;
  let competitorId: string;
  const figures = createFigures();
  /** Checks that each accepted write is in the log (run at the end, once projections settle). */
  const ledger: { name: string; stored: () => Promise<boolean> }[] = [];

  beforeAll(async () => {
    app = await startSecurityApp(backend);
    admin = await app.client('admin');
    editor = await app.client('editor');
    const { rows } = await app.db.pool.query<{ id: string }>('SELECT id FROM competitor_list LIMIT 1');
    competitorId = rows[0]?.id ?? '';
  });
  afterAll(async () => {
    figures.print(backend);
    await app?.close();
  });

  const inLog = (sql: string, params: unknown[]) => async () =>
    ((await app.db.pool.query(sql, params)).rowCount ?? 0) > 0;

  it('route parameters: any value answers < 500', async () => {
    const parameterised = appRoutes.filter((r) => r.path.includes(':'));
    expect(parameterised.length).toBeGreaterThanOrEqual(7);
    for (const route of parameterised) {
      await admin.get('/competitors');
      await fc.assert(
        fc.asyncProperty(pathSegment, async (segment) => {
          const path = route.path.replace(/:\w+/g, segment);
          const response =
            route.method === 'GET' ? await admin.get(path) : await admin.postForm(path, { role: 'viewer' });
          figures.record('route-param', response.status, `${route.method} ${path}`);
          return response.status < 500;
        }),
        { numRuns: RUNS },
      );
    }
  });

  it('query parameters: any value answers < 500', async () => {
    const pages = ['/competitors', '/users', '/audit', `/competitors/${competitorId}/history`, '/login'];
    const query = fc.dictionary(
      fc.constantFrom('search', 'sort', 'page', 'perPage', 'column', 'asOf', 'next', 'other'),
      fc.oneof(hostileString, fc.array(hostileString, { maxLength: 3 })),
    );
    for (const page of pages) {
      await fc.assert(
        fc.asyncProperty(query, fc.boolean(), async (values, xhr) => {
          const params = new URLSearchParams();
          for (const [k, v] of Object.entries(values))
            for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
          const response = await (page === '/login' ? new TestClient(app.url) : admin).get(
            `${page}?${params.toString()}`,
            { xhr },
          );
          figures.record('query-param', response.status, `${page}?${params.toString()}`);
          return response.status < 500;
        }),
        { numRuns: RUNS },
      );
    }
  });

  it('headers and cookies: any value answers < 500', async () => {
    await admin.get('/competitors');
    const headers = fc.dictionary(
      fc.constantFrom(
        'Cookie',
        'Origin',
        'Referer',
        'Sec-Fetch-Site',
        'X-Requested-With',
        'X-CSRF-Token',
        'X-Request-Id',
        'X-Forwarded-For',
        'X-Forwarded-Host',
        'X-Forwarded-Proto',
        'Accept',
        'Content-Type',
        'Authorization',
      ),
      headerString,
      { maxKeys: 5 },
    );
    const target = fc.constantFrom(
      ['GET', '/competitors'],
      ['GET', '/login'],
      ['GET', '/metrics'],
      ['POST', '/competitors/new'],
      ['POST', '/components/competitor-notes'],
      ['POST', '/logout'],
    );
    await fc.assert(
      fc.asyncProperty(headers, target, fc.boolean(), async (sent, [method, path], signedIn) => {
        const base: Record<string, string> = signedIn
          ? { Cookie: admin.cookieHeader(), 'X-CSRF-Token': admin.csrfToken, Origin: app.url }
          : {};
        const response = await fetch(`${app.url}${path}`, {
          method,
          redirect: 'manual',
          headers: { ...base, ...sent },
          ...(method === 'POST' ? { body: '{"event":"update-note","payload":{}}' } : {}),
        });
        await response.arrayBuffer();
        figures.record('header-cookie', response.status, `${method} ${path} ${JSON.stringify(sent)}`);
        return response.status < 500;
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it('form fields: any value answers < 500, and every accepted write is in the log', async () => {
    let n = 0;
    await editor.get('/competitors/new');
    const competitorForm = fc.record({
      name: almostValid('Fuzz'),
      website: fc.oneof(fc.constant(''), fc.constant('https://fuzz.example'), hostileString),
      segmentId: fc.oneof(fc.constantFrom('smb', 'enterprise'), hostileString),
      threat: fc.oneof(fc.constantFrom('low', 'medium', 'high'), hostileString),
      headquarters: fc.oneof(fc.constant(''), almostValid('Town')),
      expectedVersion: fc.oneof(fc.constant(''), hostileString),
    });
    await fc.assert(
      fc.asyncProperty(competitorForm, fc.boolean(), async (form, edit) => {
        const name = `${form.name} #${++n}`;
        const path = edit ? `/competitors/${competitorId}/edit` : '/competitors/new';
        const response = await editor.postForm(path, { ...form, name });
        figures.record('form-field', response.status, `${path} ${JSON.stringify(form)}`);
        if (response.status === 302) {
          figures.of('form-field').accepted++;
          const type = edit ? 'CompetitorUpdated' : 'CompetitorAdded';
          ledger.push({
            name: 'form-field',
            // As the form's schema stores it: composed (NFC), then trimmed (events/text.ts). A generated
            // name with a decomposed character ('e' + U+0301) is stored as 'é': looked for as sent, it
            // was reported missing (one run in several, as the generator's seed fell).
            stored: inLog(`SELECT 1 FROM events WHERE type = $1 AND data->>'name' = $2`, [
              type,
              name.normalize('NFC').trim(),
            ]),
          });
        }
        return response.status < 500;
      }),
      { numRuns: RUNS * 2 },
    );

    await admin.get('/users/new');
    const userForm = fc.record({
      email: fc.oneof(hostileString, fc.constant('ok')),
      displayName: almostValid('Person'),
      role: fc.oneof(fc.constantFrom('viewer', 'editor', 'admin'), hostileString),
      password: fc.oneof(fc.constant('short'), hostileString),
    });
    await fc.assert(
      fc.asyncProperty(userForm, async (form) => {
        // Valid accounts are expensive (a full password hash): mostly invalid ones, a valid one now and then.
        const email = form.email === 'ok' ? `fuzz${++n}@rivals.test` : form.email;
        const response = await admin.postForm('/users', { ...form, email });
        figures.record('form-field', response.status, `/users ${JSON.stringify(form)}`);
        if (response.status === 302) {
          figures.of('form-field').accepted++;
          ledger.push({
            name: 'form-field',
            stored: inLog(`SELECT 1 FROM events WHERE type = 'UserAdded' AND data->>'email' = $1`, [email]),
          });
        }
        return response.status < 500;
      }),
      { numRuns: RUNS },
    );
  });

  it('component payloads: any body answers < 500, and every accepted note is in the log', async () => {
    await editor.get('/competitors');
    const note = fc.record({
      competitorId: fc.constant(competitorId),
      column: fc.constantFrom(...noteColumns),
      value: almostValid('Note'),
    });
    const payload = fc.oneof(
      { weight: 3, arbitrary: note },
      fc.record(
        {
          competitorId: fc.oneof(fc.constant(competitorId), hostileString),
          column: fc.oneof(fc.constantFrom(...noteColumns), hostileString),
          value: fc.oneof(almostValid('Note'), fc.jsonValue()),
          extra: fc.jsonValue(),
        },
        { requiredKeys: ['competitorId', 'column', 'value'] },
      ),
      { weight: 1, arbitrary: fc.jsonValue() },
    );
    const body = fc.oneof(
      { weight: 4, arbitrary: fc.record({ event: fc.constant('update-note'), payload }) },
      {
        weight: 1,
        arbitrary: fc.record(
          {
            event: fc.oneof(fc.constant('update-note'), hostileString),
            method: hostileString,
            payload,
            expect: fc.oneof(fc.record({ version: fc.jsonValue() }), fc.jsonValue()),
          },
          { requiredKeys: [] },
        ),
      },
      { weight: 1, arbitrary: fc.jsonValue() },
    );
    await fc.assert(
      fc.asyncProperty(
        body,
        fc.oneof(fc.constant('competitor-notes'), pathSegment),
        async (json, component) => {
          const response = await editor.postJson(`/components/${component}`, json);
          figures.record('component-payload', response.status, `${component} ${JSON.stringify(json)}`);
          if (response.status === 200) {
            const answer = (await response.json()) as { status?: string; position?: number | null };
            if (answer.status === 'accepted' && typeof answer.position === 'number') {
              figures.of('component-payload').accepted++;
              ledger.push({
                name: 'component-payload',
                stored: inLog('SELECT 1 FROM events WHERE position = $1', [answer.position]),
              });
            }
          }
          return response.status < 500;
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });

  it('cookie, origin, auth and query: a refusal or, with a real session from our origin, a connection', async () => {
    const session = editor.cookieHeader();
    const cookie = fc.oneof(
      headerString,
      headerString.map((v) => `rivals_session=${v}`),
      headerString.map((v) => `${session}; rivals_session=${v}`),
      fc.constant(session),
    );
    // Engine.IO's own parameters are the transport's, not the application's.
    const queryKey = fc
      .string({ minLength: 1, maxLength: 8 })
      .filter((k) => !['EIO', 'transport', 'sid', 't', 'j', 'b64'].includes(k));
    const origin = fc.oneof(fc.constant(undefined), fc.constant(app.url), headerString);
    const handshake = fc.record({
      cookie,
      origin,
      auth: fc.option(fc.dictionary(hostileString, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }), {
        nil: undefined,
      }),
      query: fc.option(fc.dictionary(queryKey, headerString, { maxKeys: 4 }), {
        nil: undefined,
      }),
      transport: fc.constant('websocket' as const),
    });
    let unexpected = 0;
    let bypass = 0;
    await fc.assert(
      fc.asyncProperty(handshake, async (h) => {
        const socket = app.socket(h);
        const result = await handshakeResult(socket);
        socket.disconnect();
        const legitimate =
          h.cookie
            .split(';')
            .some((part) => session.includes(part.trim()) && part.includes('rivals_session=')) &&
          (h.origin === undefined || h.origin === app.url);
        if (result.connected && !legitimate) bypass++;
        if (!result.connected && !REFUSALS.has(result.message)) unexpected++;
        figures.record(
          `socket-${h.transport}`,
          result.connected || REFUSALS.has(result.message) ? 101 : 500,
          JSON.stringify(h),
        );
        return !(result.connected && !legitimate) && (result.connected || REFUSALS.has(result.message));
      }),
      { numRuns: RUNS * 4 },
    );
    expect({ unexpected, bypass }).toEqual({ unexpected: 0, bypass: 0 });
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });

  it('raw Engine.IO requests answer < 500', async () => {
    const request = fc.record({
      EIO: fc.oneof(fc.constant('4'), hostileString),
      transport: fc.oneof(fc.constantFrom('polling', 'websocket'), hostileString),
      sid: fc.option(hostileString, { nil: undefined }),
      method: fc.constantFrom('GET', 'POST'),
      body: fc.oneof(fc.constantFrom('40', '2', '4', '42["change",{}]', '40{"token":1}'), hostileString),
      cookie: headerString,
    });
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const params = new URLSearchParams({ EIO: r.EIO, transport: r.transport });
        if (r.sid !== undefined) params.set('sid', r.sid);
        const response = await fetch(`${app.url}/socket.io/?${params.toString()}`, {
          method: r.method,
          headers: { Cookie: r.cookie, 'Content-Type': 'text/plain;charset=UTF-8' },
          ...(r.method === 'POST' ? { body: r.body } : {}),
        });
        await response.arrayBuffer();
        figures.record('engine-io-raw', response.status, JSON.stringify(r));
        return response.status < 500;
      }),
      { numRuns: RUNS * 2 },
    );
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  });

  it('sign-in fields: any value answers < 500', async () => {
    // Last: failed sign-ins lock this address for a minute.
    const visitor = new TestClient(app.url);
    await visitor.get('/login');
    await fc.assert(
      fc.asyncProperty(
        fc.record({ email: hostileString, password: hostileString, next: hostileString }),
        async (form) => {
          const response = await visitor.postForm('/login', form);
          figures.record('form-field', response.status, `/login ${JSON.stringify(form)}`);
          return response.status < 500;
        },
      ),
      // Each refused sign-in costs a full password hash until the address is locked (20 a minute).
      { numRuns: Math.min(RUNS, 15) },
    );
  });

  it('every accepted write is in the log', async () => {
    const missing: string[] = [];
    for (const entry of ledger) {
      try {
        await waitFor(entry.stored, 'an accepted write in the log', 10_000);
        figures.of(entry.name).stored++;
      } catch {
        missing.push(entry.name);
      }
    }
    expect(missing).toEqual([]);
    for (const [name, tally] of figures.all()) {
      expect(tally.fiveHundreds, `${name}: ${tally.samples.join('\n')}`).toBe(0);
      expect(tally.tried, name).toBeGreaterThan(0);
    }
  });
});
