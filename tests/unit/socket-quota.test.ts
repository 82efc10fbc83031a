import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createSocketQuota } from '#web/realtime/socket-quota.server.ts';

const connection = () => new EventEmitter();

describe('socket quota', () => {
  it('refuses a user past the limit, and frees a place when one of their connections closes', () => {
    const quota = createSocketQuota(2);
    const first = connection();
    expect(quota.take('u1', first)).toBe(true);
    expect(quota.take('u1', connection())).toBe(true);
    expect(quota.take('u1', connection())).toBe(false);
    // Another user is counted on their own.
    expect(quota.take('u2', connection())).toBe(true);
    first.emit('close');
    expect(quota.held('u1')).toBe(1);
    expect(quota.take('u1', connection())).toBe(true);
  });

  it('counts a connection once, however often it connects again (Socket.IO connect, disconnect, connect… on it)', () => {
    const quota = createSocketQuota(2);
    const one = connection();
    for (let i = 0; i < 5; i++) expect(quota.take('u1', one)).toBe(true);
    expect(quota.held('u1')).toBe(1);
    // The user's other tabs still get their places.
    expect(quota.take('u1', connection())).toBe(true);
    one.emit('close');
    expect(quota.held('u1')).toBe(1);
  });

  it('forgets a user whose connections all closed', () => {
    const quota = createSocketQuota(2);
    const only = connection();
    quota.take('u1', only);
    only.emit('close');
    expect(quota.held('u1')).toBe(0);
    expect(quota.take('u1', connection())).toBe(true);
  });
});
