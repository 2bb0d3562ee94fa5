import { isIP } from "node:net";
import { canonicalIPv6, ipv6Groups } from "../platform/ip.js";

/**
 * The key a source address is limited by: an IPv4 address as it is (IPv4-mapped IPv6 included), an IPv6 address
 * by its /64, which one host or customer line usually holds whole, so walking through it gains an attacker nothing.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (isIP(address.replace(/%.*$/, "")) !== 6) return address;
  const canonical = canonicalIPv6(address);
  if (canonical === null) return address;
  return `${ipv6Groups(canonical)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
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
