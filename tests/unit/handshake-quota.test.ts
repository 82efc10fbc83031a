import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { addressKey } from '#web/address-key.ts';
import { createHandshakeQuota } from '#web/realtime/handshake-quota.server.ts';

/** An upgrade request from `address` (through a proxy when `forwardedFor` is given). */
function upgrade(address: string, forwardedFor?: string) {
  const socket = Object.assign(new EventEmitter(), { remoteAddress: address });
  const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
  return { socket, headers } as unknown as IncomingMessage & { socket: EventEmitter };
}

const allowed = (quota: ReturnType<typeof createHandshakeQuota>, request: IncomingMessage) => {
  let answer: boolean | undefined;
  quota.allowRequest(request, (_error, ok) => (answer = ok));
  return answer;
};

describe('handshake quota', () => {
  it('refuses an address past its limit of unbound connections; a close or a sign-in frees a place', () => {
    const quota = createHandshakeQuota(false, { perAddress: 2 });
    const [first, second] = [upgrade('10.0.0.1'), upgrade('10.0.0.1')];
    expect(allowed(quota, first)).toBe(true);
    expect(allowed(quota, second)).toBe(true);
    expect(allowed(quota, upgrade('10.0.0.1'))).toBe(false);
    // Another address is counted on its own.
    expect(allowed(quota, upgrade('10.0.0.2'))).toBe(true);
    first.socket.emit('close');
    expect(allowed(quota, upgrade('10.0.0.1'))).toBe(true);
    quota.bound(second);
    // Bound and then closed: counted out once, not twice.
    second.socket.emit('close');
    expect(quota.pending('10.0.0.1')).toBe(1);
  });

  it('refuses everyone past the limit in all, whatever the address', () => {
    const quota = createHandshakeQuota(false, { perAddress: 10, total: 3 });
    const held = ['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((a) => upgrade(a));
    for (const request of held) expect(allowed(quota, request)).toBe(true);
    expect(allowed(quota, upgrade('10.0.0.4'))).toBe(false);
    held[0]?.socket.emit('close');
    expect(quota.pending()).toBe(2);
    expect(allowed(quota, upgrade('10.0.0.4'))).toBe(true);
  });

  it('behind a trusted proxy counts the address the proxy names last, not the proxy', () => {
    const quota = createHandshakeQuota(true, { perAddress: 1 });
    expect(allowed(quota, upgrade('127.0.0.1', 'spoofed, 203.0.113.7'))).toBe(true);
    expect(allowed(quota, upgrade('127.0.0.1', '203.0.113.8'))).toBe(true);
    expect(allowed(quota, upgrade('127.0.0.1', 'other, 203.0.113.7'))).toBe(false);
    // Without a trusted proxy the header is ignored: both come from the proxy's address.
    const direct = createHandshakeQuota(false, { perAddress: 1 });
    expect(allowed(direct, upgrade('127.0.0.1', '203.0.113.7'))).toBe(true);
    expect(allowed(direct, upgrade('127.0.0.1', '203.0.113.8'))).toBe(false);
  });
});

describe('the address a limit counts', () => {
  it('is an IPv4 address as it is, and an IPv6 address by its /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
  });

  it('counts the addresses of one IPv6 /64 together', () => {
    const quota = createHandshakeQuota(false, { perAddress: 2 });
    // Said true for every one before: each address of the /64 had places of its own.
    expect(allowed(quota, upgrade('2001:db8:1:2::a'))).toBe(true);
    expect(allowed(quota, upgrade('2001:db8:1:2::b'))).toBe(true);
    expect(allowed(quota, upgrade('2001:db8:1:2:ffff::c'))).toBe(false);
    expect(allowed(quota, upgrade('2001:db8:1:3::a'))).toBe(true);
    expect(quota.pending('2001:db8:1:2::99')).toBe(2);
  });
});
