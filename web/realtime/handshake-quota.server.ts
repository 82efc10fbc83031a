import type { IncomingMessage } from 'node:http';
import type { TrustProxy } from '../site-origin.server.ts';
import { addressKey } from '../address-key.ts';

/**
 * Connections one address, and everyone together, may hold open before they are bound to a session.
 * Anyone can open a WebSocket to /socket.io without a cookie, and Socket.IO keeps it until it asks to join
 * (up to `connectTimeout`, 10 s) however the sign-in check then ends: one client held 3,000 file
 * descriptors this way within 2 s (two held 18,000 in 13 s; the process may have 20,000), and a process
 * out of descriptors can neither accept a request nor open a database connection. A browser tab holds
 * one for a few milliseconds. Per address: above the sockets one user may hold (100), so a user opening
 * many tabs at once is not refused. In all: a quarter of the descriptors, so requests always find some.
 * A refused browser tries again by itself (Socket.IO's reconnection), and catches up meanwhile through
 * its position checks.
 */
export const MAX_PENDING_PER_ADDRESS = 200;
export const MAX_PENDING = 5_000;

export interface HandshakeQuota {
  /** Engine.IO's `allowRequest`: refuses an address already holding the limit of unbound connections. */
  allowRequest(
    request: IncomingMessage,
    callback: (error: string | null | undefined, ok: boolean) => void,
  ): void;
  /** The connection of `request` is bound to a session now: the per-user quota counts it from here. */
  bound(request: IncomingMessage): void;
  /** Unbound connections counted now, for an address (its /64 when IPv6) or in all. */
  pending(address?: string): number;
}

/**
 * The client's address, by the rule Koa applies for HTTP (`maxIpsCount: 1`: the last X-Forwarded-For),
 * counted by its /64 when it is IPv6 (addressKey).
 */
function addressOf(request: IncomingMessage, trustProxy: TrustProxy): string {
  const forwarded = trustProxy === false ? undefined : request.headers['x-forwarded-for'];
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').at(-1)?.trim();
  return addressKey(last || request.socket.remoteAddress || 'unknown');
}

export function createHandshakeQuota(
  trustProxy: TrustProxy,
  limits: { perAddress?: number; total?: number } = {},
): HandshakeQuota {
  const { perAddress = MAX_PENDING_PER_ADDRESS, total = MAX_PENDING } = limits;
  const counts = new Map<string, number>();
  let all = 0;
  const releases = new WeakMap<IncomingMessage, () => void>();
  return {
    allowRequest(request, callback) {
      const address = addressOf(request, trustProxy);
      const now = counts.get(address) ?? 0;
      if (now >= perAddress || all >= total)
        return callback('too many connections waiting to sign in', false);
      counts.set(address, now + 1);
      all++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        all--;
        const left = (counts.get(address) ?? 1) - 1;
        if (left > 0) counts.set(address, left);
        else counts.delete(address);
      };
      releases.set(request, release);
      // However the connection ends: refused by the sign-in check, timed out, or never upgraded at all.
      request.socket.once('close', release);
      callback(null, true);
    },
    bound(request) {
      releases.get(request)?.();
    },
    pending: (address) => (address === undefined ? all : (counts.get(addressKey(address)) ?? 0)),
  };
}
