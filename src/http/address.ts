import { isIP } from "node:net";

/** The eight 16-bit groups of an IPv6 address (zone removed, an embedded dotted IPv4 tail folded in). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, "");
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const parse = (part: string | undefined) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The key a source address is limited by: an IPv4 address as it is (IPv4-mapped IPv6 included), an IPv6 address
 * by its /64, which one host or customer line usually holds whole, so walking through it gains an attacker nothing.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIP(address.replace(/%.*$/, "")) !== 6) return address;
  return `${ipv6Groups(address).slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/**
 * Where a request comes from: the socket's peer, or with `trustedHops` proxies in front, the X-Forwarded-For
 * entry that many hops from the right (each trusted proxy appends the address it received from). Entries further
 * left are the client's own claims and are never used. An entry that is not an IP address falls back to the peer.
 */
export function sourceAddress(peer: string | undefined, forwardedFor: string | string[] | undefined, trustedHops: number): string {
  const socket = peer ?? "unknown";
  if (trustedHops === 0) return addressKey(socket);
  const chain = [
    ...[forwardedFor ?? []]
      .flat()
      .flatMap((h) => h.split(","))
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    socket,
  ];
  const chosen = chain[Math.max(0, chain.length - 1 - trustedHops)];
  return addressKey(isIP(chosen) ? chosen : socket);
}
