import { describe, expect, it } from 'vitest';
import { listenUrl } from '#web/listen-url.ts';

describe('the address the start-up line shows for HOST', () => {
  it('an IPv6 literal is in brackets, as a browser takes it', () => {
    // `HOST=::1 npm start` said http://localhost:3000, which may reach 127.0.0.1 where nothing listens.
    expect(listenUrl('::1', 3000)).toEqual({ url: 'http://[::1]:3000' });
    expect(listenUrl('2001:db8::7', 8080)).toEqual({ url: 'http://[2001:db8::7]:8080' });
    // A zone, as "%25" in a URL (RFC 6874).
    expect(listenUrl('fe80::1%eth0', 3000)).toEqual({ url: 'http://[fe80::1%25eth0]:3000' });
    expect(listenUrl('::ffff:127.0.0.1', 3000)).toEqual({ url: 'http://[::ffff:127.0.0.1]:3000' });
  });

  it('an IPv4 address or a name is shown as given', () => {
    expect(listenUrl('127.0.0.2', 3000)).toEqual({ url: 'http://127.0.0.2:3000' });
    expect(listenUrl('localhost', 3000)).toEqual({ url: 'http://localhost:3000' });
    expect(listenUrl('rivals.internal', 4000)).toEqual({ url: 'http://rivals.internal:4000' });
  });

  it('every address (0.0.0.0, ::) is shown as one that reaches it from here, with a word on the rest', () => {
    expect(listenUrl('0.0.0.0', 3000)).toEqual({
      url: 'http://localhost:3000',
      note: 'listening on every IPv4 address of this machine, HOST=0.0.0.0',
    });
    expect(listenUrl('::', 3000)).toEqual({
      url: 'http://localhost:3000',
      note: 'listening on every address of this machine, HOST=::',
    });
  });
});
