/** Canonical (WHATWG-serialised, no zone, no dotted quad) form of an IPv6 address, or null. */
export function canonicalIPv6(address: string): string | null {
  try {
    return new URL(`http://[${address.replace(/%.*$/, "")}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

/** The eight 16-bit groups of a canonical IPv6 address. */
export function ipv6Groups(canonical: string): number[] {
  const [head = "", tail] = canonical.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
