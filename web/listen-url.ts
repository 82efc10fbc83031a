import net from 'node:net';

/**
 * The address a person can paste into a browser for a server listening on `host` and `port`, with a word
 * when that is not all of it. The start-up line said "http://localhost:PORT" whatever HOST was: wrong for
 * HOST=::1 or 127.0.0.2 (nothing listens for localhost's other address) and for a name of this machine.
 * An IPv6 literal goes in brackets (its zone, as in fe80::1%eth0, written %25, RFC 6874); every address
 * (0.0.0.0, ::) is shown as localhost, which reaches it, with a word that others may reach it too.
 */
export function listenUrl(host: string, port: number): { url: string; note?: string } {
  const everyAddress: Record<string, string> = {
    '0.0.0.0': 'every IPv4 address of this machine',
    '::': 'every address of this machine',
  };
  const every = everyAddress[host];
  if (every) return { url: `http://localhost:${port}`, note: `listening on ${every}, HOST=${host}` };
  if (net.isIPv6(host)) return { url: `http://[${host.replace('%', '%25')}]:${port}` };
  return { url: `http://${host}:${port}` };
}
