/**
 * The key a per-address limit counts a client under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address as its IPv4), an IPv6 address by its /64 network. One subscriber is routinely given a whole
 * /64, so counting each IPv6 address on its own would give one client 2^64 places.
 */
export function addressKey(address: string): string {
  const plain = address.split('%')[0] ?? address; // a zone index (fe80::1%eth0) is no part of the address
  if (!plain.includes(':')) return plain;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(plain);
  if (mapped?.[1]) return mapped[1];
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const [head = '', tail] = plain.split('::');
  const front = groups(head);
  // An IPv4 tail (64:ff9b::192.0.2.1) takes two groups' room; only the first four groups are kept anyway.
  const back = tail === undefined ? [] : groups(tail).flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const all =
    tail === undefined
      ? front
      : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  const network = all.slice(0, 4).map((g) => (Number.parseInt(g, 16) || 0).toString(16));
  return `${network.join(':')}::/64`;
}
