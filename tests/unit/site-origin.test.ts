import { describe, expect, it } from 'vitest';
import { fromOwnSite, siteOrigin } from '#web/site-origin.server.ts';

/**
 * The one origin rule forms, XHR, the sign-in return and the Socket.IO handshake share
 * (web/site-origin.server.ts): which headers count depends on TRUST_PROXY only.
 */
describe('siteOrigin', () => {
  const behindProxy = { host: '127.0.0.1:4820', 'x-forwarded-host': 'rivals.example' };

  it('takes the proxy-named host only when a proxy is trusted, and the scheme from the setting', () => {
    expect(siteOrigin(behindProxy, true)).toBe('https://rivals.example');
    expect(siteOrigin(behindProxy, 'http')).toBe('http://rivals.example');
    expect(siteOrigin(behindProxy, false)).toBe('http://127.0.0.1:4820');
    // X-Forwarded-Proto never picks the scheme.
    expect(siteOrigin({ ...behindProxy, 'x-forwarded-proto': 'http' }, true)).toBe('https://rivals.example');
    expect(siteOrigin({ ...behindProxy, 'x-forwarded-proto': 'https' }, 'http')).toBe(
      'http://rivals.example',
    );
    expect(siteOrigin({ ...behindProxy, 'x-forwarded-proto': 'https' }, false)).toBe('http://127.0.0.1:4820');
    // A trusted proxy that names no host: the Host it sent.
    expect(siteOrigin({ host: 'rivals.example:8443' }, true)).toBe('https://rivals.example:8443');
    expect(siteOrigin({ host: 'rivals.example', 'x-forwarded-host': ' ' }, true)).toBe(
      'https://rivals.example',
    );
  });

  it('takes the last of several forwarded hosts: the one the proxy appended', () => {
    const appended = { host: 'backend:3000', 'x-forwarded-host': 'evil.example, rivals.example' };
    expect(siteOrigin(appended, true)).toBe('https://rivals.example');
  });

  it('writes the host as browsers write an Origin: lower case, no default port', () => {
    expect(siteOrigin({ host: 'Rivals.Example:443' }, true)).toBe('https://rivals.example');
    expect(siteOrigin({ host: 'rivals.example:80' }, false)).toBe('http://rivals.example');
    expect(siteOrigin({ host: '[::1]:4820' }, false)).toBe('http://[::1]:4820');
  });

  it('has no origin for a missing or malformed host', () => {
    for (const host of [
      undefined,
      '',
      'rivals.example/path',
      'user@rivals.example',
      'rivals.example?x',
      'rivals example',
      'rivals.example:99999',
      'rivals.example:',
    ])
      expect(siteOrigin({ host }, false), String(host)).toBeUndefined();
    // A trusted proxy's malformed value is not replaced by Host: the proxy said something we cannot read.
    expect(
      siteOrigin({ host: 'rivals.example', 'x-forwarded-host': 'rivals.example, ' }, true),
    ).toBeUndefined();
    expect(siteOrigin({ host: 'rivals.example', 'x-forwarded-host': 'a.example/x' }, true)).toBeUndefined();
  });
});

describe('fromOwnSite', () => {
  const headers = { host: '127.0.0.1:4820', 'x-forwarded-host': 'rivals.example' };

  it('accepts the site origin and refuses every other one', () => {
    expect(fromOwnSite({ ...headers, origin: 'https://rivals.example' }, true)).toBe(true);
    expect(fromOwnSite({ ...headers, origin: 'https://RIVALS.example:443' }, true)).toBe(true);
    for (const origin of [
      'http://rivals.example',
      'https://127.0.0.1:4820',
      'https://evil.example',
      'null',
      'garbage',
      '',
    ])
      expect(fromOwnSite({ ...headers, origin }, true), origin).toBe(false);
    // Without TRUST_PROXY the forwarded name is not ours; Host is.
    expect(fromOwnSite({ ...headers, origin: 'http://rivals.example' }, false)).toBe(false);
    expect(fromOwnSite({ ...headers, origin: 'http://127.0.0.1:4820' }, false)).toBe(true);
  });

  it('refuses a request the browser says is cross-site, and lets one without Origin through', () => {
    const own = { ...headers, origin: 'https://rivals.example' };
    expect(fromOwnSite({ ...own, 'sec-fetch-site': 'same-site' }, true)).toBe(false);
    expect(fromOwnSite({ ...own, 'sec-fetch-site': 'same-origin' }, true)).toBe(true);
    expect(fromOwnSite(headers, true)).toBe(true);
    expect(fromOwnSite({ ...headers, 'sec-fetch-site': 'cross-site' }, true)).toBe(false);
  });
});
