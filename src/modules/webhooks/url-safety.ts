import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { LRUCache } from "lru-cache";
import { canonicalIPv6, ipv6Groups } from "../../platform/ip.js";

export type WebhookEnvironment = "SANDBOX" | "PRODUCTION";

export type WebhookUrlErrorCode = "INVALID_URL" | "INSECURE_SCHEME" | "PRIVATE_NETWORK" | "UNRESOLVABLE_HOST";

/** Resolves a host name to IP address strings. Injectable so tests never touch DNS. */
export type HostResolver = (host: string) => Promise<string[]>;

export interface CheckWebhookUrlOptions {
  environment: WebhookEnvironment;
  /** Development/self-hosted escape hatch; cloud metadata endpoints stay refused regardless. */
  allowPrivateNetworks: boolean;
  resolve?: HostResolver;
}

export type WebhookUrlCheckResult = { ok: true; url: URL; addresses: string[] } | { ok: false; code: WebhookUrlErrorCode; message: string };

/** The system resolver (getaddrinfo), as an HTTP client would resolve the host. */
export const resolveHost: HostResolver = async (host) => {
  // verbatim keeps the resolver's order, so the address we pin is the one a normal client would try first.
  const results = await lookup(host, { all: true, verbatim: true });
  return results.map((r) => r.address);
};

// Host names that reach instance metadata services without going through DNS on some clouds
// (GCE resolves both via its internal resolver / search domain).
const METADATA_HOSTS = new Set(["metadata.google.internal", "metadata"]);

// Credential-bearing metadata endpoints: refused even with allowPrivateNetworks, because one
// leaked request hands out cloud credentials and no legitimate receiver lives there.
const metadataAddresses = new BlockList();
metadataAddresses.addAddress("169.254.169.254", "ipv4"); // AWS/GCP/Azure/OCI IMDS
metadataAddresses.addAddress("169.254.170.2", "ipv4"); // AWS ECS task credentials
metadataAddresses.addAddress("169.254.170.23", "ipv4"); // AWS EKS pod identity
metadataAddresses.addAddress("100.100.100.200", "ipv4"); // Alibaba Cloud ECS metadata
metadataAddresses.addAddress("192.0.0.192", "ipv4"); // Oracle Cloud metadata (legacy)
metadataAddresses.addAddress("168.63.129.16", "ipv4"); // Azure WireServer (platform and guest agent)
metadataAddresses.addAddress("fd00:ec2::254", "ipv6"); // AWS IMDS over IPv6
metadataAddresses.addAddress("fd00:ec2::23", "ipv6"); // AWS EKS pod identity over IPv6

interface Range {
  readonly label: string;
  readonly list: BlockList;
}

function range(label: string, family: "ipv4" | "ipv6", cidrs: readonly string[]): Range {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, prefix] = cidr.split("/");
    if (net === undefined || prefix === undefined) throw new Error(`bad CIDR ${cidr}`);
    list.addSubnet(net, Number(prefix), family);
  }
  return { label, list };
}

// IANA special-purpose registry entries that a public webhook receiver can never legitimately use.
const IPV4_BLOCKED: readonly Range[] = [
  range("loopback", "ipv4", ["127.0.0.0/8"]),
  range('unspecified ("this network")', "ipv4", ["0.0.0.0/8"]),
  range("private", "ipv4", ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]),
  range("link-local", "ipv4", ["169.254.0.0/16"]),
  range("carrier-grade NAT (shared address space)", "ipv4", ["100.64.0.0/10"]),
  range("benchmarking", "ipv4", ["198.18.0.0/15"]),
  range("documentation", "ipv4", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]),
  range("multicast", "ipv4", ["224.0.0.0/4"]),
  range("reserved", "ipv4", ["240.0.0.0/4", "255.255.255.255/32", "192.0.0.0/24", "192.88.99.0/24"]),
];

const IPV6_BLOCKED: readonly Range[] = [
  range("loopback", "ipv6", ["::1/128"]),
  range("unspecified", "ipv6", ["::/128"]),
  range("private (unique local)", "ipv6", ["fc00::/7"]),
  range("link-local", "ipv6", ["fe80::/10"]),
  range("multicast", "ipv6", ["ff00::/8"]),
  range("documentation", "ipv6", ["2001:db8::/32", "3fff::/20"]),
  // 2001::/23 holds Teredo, benchmarking (2001:2::/48) and ORCHID; 2002::/16 is deprecated 6to4,
  // whose relays could forward to an arbitrary embedded IPv4; fec0::/10 is deprecated site-local.
  range("reserved", "ipv6", ["2001::/23", "2002::/16", "fec0::/10", "::/96", "100::/64"]),
];

// Only 2000::/3 is allocated for global unicast; anything else left over is reserved.
const IPV6_GLOBAL_UNICAST = range("global unicast", "ipv6", ["2000::/3"]).list;

// Ranges whose last 32 bits are an IPv4 address that the packet really goes to.
const IPV4_MAPPED = range("IPv4-mapped", "ipv6", ["::ffff:0:0/96"]).list;
const NAT64 = range("NAT64", "ipv6", ["64:ff9b::/96"]).list;
// Ranges that carry an IPv4 address a host or relay may still deliver to: IPv4-compatible (::a.b.c.d, deprecated)
// in the last 32 bits, 6to4 (2002:AABB:CCDD::) in bits 16..47. Both are refused as reserved; carrying a metadata
// address, they are refused as that address even where private networks are allowed.
const IPV4_COMPATIBLE = range("IPv4-compatible", "ipv6", ["::/96"]).list;
const SIX_TO_FOUR = range("6to4", "ipv6", ["2002::/16"]).list;

/** The IPv4 address carried in the two 16-bit groups of a canonical IPv6 address starting at `group` (default: the last two). */
function embeddedIPv4(canonical: string, group = 6): string {
  const groups = ipv6Groups(canonical);
  const hi = groups[group] ?? 0;
  const lo = groups[group + 1] ?? 0;
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** The IPv4 address a tunnelling form (IPv4-compatible, 6to4) carries, or null for other addresses. */
function tunnelledIPv4(canonical: string): string | null {
  if (IPV4_COMPATIBLE.check(canonical, "ipv6")) return embeddedIPv4(canonical);
  if (SIX_TO_FOUR.check(canonical, "ipv6")) return embeddedIPv4(canonical, 1);
  return null;
}

export type AddressVerdict = { blocked: false } | { blocked: true; reason: string; metadata: boolean };

// A verdict depends on the address text alone, and every delivery attempt re-checks its endpoint's address: each
// BlockList check allocates a SocketAddress, which was about 5 % of the worker's CPU at full delivery rate.
const verdicts = new LRUCache<string, AddressVerdict>({ max: 10_000 });

/**
 * Classifies one resolved IP address. IPv4-mapped and NAT64 IPv6 addresses are judged by the
 * IPv4 address they carry, since that is where the connection actually lands.
 */
export function classifyAddress(address: string): AddressVerdict {
  let verdict = verdicts.get(address);
  if (verdict === undefined) {
    verdict = classify(address);
    verdicts.set(address, verdict);
  }
  return verdict;
}

function classify(address: string): AddressVerdict {
  const withoutZone = address.split("%")[0] ?? "";
  const family = isIP(withoutZone);
  if (family === 4) {
    if (metadataAddresses.check(withoutZone, "ipv4")) return { blocked: true, reason: "cloud metadata", metadata: true };
    for (const r of IPV4_BLOCKED) {
      if (r.list.check(withoutZone, "ipv4")) return { blocked: true, reason: r.label, metadata: false };
    }
    return { blocked: false };
  }
  if (family === 6) {
    const canonical = canonicalIPv6(withoutZone);
    if (canonical === null) return { blocked: true, reason: "unrecognised", metadata: false };
    if (IPV4_MAPPED.check(canonical, "ipv6") || NAT64.check(canonical, "ipv6")) {
      const inner = classify(embeddedIPv4(canonical));
      return inner.blocked ? { ...inner, reason: `${inner.reason} (IPv4 embedded in IPv6)` } : inner;
    }
    if (metadataAddresses.check(canonical, "ipv6")) return { blocked: true, reason: "cloud metadata", metadata: true };
    const tunnelled = tunnelledIPv4(canonical);
    if (tunnelled !== null && metadataAddresses.check(tunnelled, "ipv4")) {
      return { blocked: true, reason: "cloud metadata (IPv4 embedded in IPv6)", metadata: true };
    }
    for (const r of IPV6_BLOCKED) {
      if (r.list.check(canonical, "ipv6")) return { blocked: true, reason: r.label, metadata: false };
    }
    if (!IPV6_GLOBAL_UNICAST.check(canonical, "ipv6")) return { blocked: true, reason: "reserved", metadata: false };
    return { blocked: false };
  }
  return { blocked: true, reason: "unrecognised", metadata: false };
}

const PUBLIC_HOST_ONLY = "Webhooks can only be delivered to a publicly reachable host.";

/**
 * What the refusal of an internal address says to do instead. Both ways work offline: partner-listen needs only the
 * API (it reads the event feed), and the setting is for a service run on the developer's own machine.
 */
export const LOCAL_RECEIVER_ADVICE =
  `${PUBLIC_HOST_ONLY} For a receiver on your own machine, run partner-listen: it forwards the store's events from the ` +
  "event feed to a local URL, signed as deliveries are. On a service you run locally, start it with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.";

function fail(code: WebhookUrlErrorCode, message: string): { ok: false; code: WebhookUrlErrorCode; message: string } {
  return { ok: false, code, message };
}

/**
 * Validates a partner-supplied webhook URL and resolves it once. Deliver to one of the
 * returned `addresses` (pinned) so a DNS answer that changes after this check cannot
 * redirect the request into our network.
 */
export async function checkWebhookUrl(url: string, opts: CheckWebhookUrlOptions): Promise<WebhookUrlCheckResult> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return fail("INVALID_URL", "The webhook URL is not a valid absolute URL. Use a full URL such as https://example.com/webhooks.");
  }

  const scheme = parsed.protocol;
  if (scheme !== "https:" && !(scheme === "http:" && opts.environment === "SANDBOX")) {
    return fail(
      "INSECURE_SCHEME",
      opts.environment === "PRODUCTION"
        ? `Production webhook URLs must use https:// (got ${scheme}//). Serve your endpoint over HTTPS with a valid certificate.`
        : `Webhook URLs must use https:// or, in the sandbox, http:// (got ${scheme}//).`,
    );
  }

  if (parsed.username !== "" || parsed.password !== "") {
    // Never echo the URL here: it contains the credentials we are refusing.
    return fail(
      "INVALID_URL",
      "Webhook URLs must not contain a username or password (user:pass@host). Remove the credentials; " +
        "authenticate deliveries by verifying the webhook signature header instead.",
    );
  }

  // WHATWG URL lower-cases the host and normalises IPv4 forms such as 0x7f.1 or 2130706433.
  const bracketed = parsed.hostname;
  const host = bracketed.startsWith("[") && bracketed.endsWith("]") ? bracketed.slice(1, -1) : bracketed;
  if (host === "") {
    return fail("INVALID_URL", "The webhook URL has no host. Use a full URL such as https://example.com/webhooks.");
  }

  const checked = await checkHost(host, opts);
  return checked.ok ? { ok: true, url: parsed, addresses: checked.addresses } : checked;
}

export type HostCheckResult = { ok: true; addresses: string[] } | { ok: false; code: WebhookUrlErrorCode; message: string };

/**
 * The network rules for one host (a name or an IP literal, without brackets), whatever the protocol: a webhook URL's
 * and a message broker's alike. Resolves it once; deliver to one of the returned `addresses` (pinned).
 */
export async function checkHost(host: string, opts: Omit<CheckWebhookUrlOptions, "environment">): Promise<HostCheckResult> {
  const hostForNameCheck = host.replace(/\.+$/, "");
  if (METADATA_HOSTS.has(hostForNameCheck)) {
    return fail("PRIVATE_NETWORK", `"${host}" is a cloud metadata service, not a webhook receiver. ${PUBLIC_HOST_ONLY}`);
  }

  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    const resolve = opts.resolve ?? resolveHost;
    try {
      addresses = await resolve(host);
    } catch (err) {
      const detail = err instanceof Error && "code" in err && typeof err.code === "string" ? ` (${err.code})` : "";
      return fail(
        "UNRESOLVABLE_HOST",
        `The host "${host}" could not be resolved${detail}. Check the hostname for typos and make sure it has a public DNS A or AAAA record.`,
      );
    }
    if (addresses.length === 0 || addresses.some((a) => isIP(a.split("%")[0] ?? "") === 0)) {
      return fail("UNRESOLVABLE_HOST", `The host "${host}" did not resolve to any usable IP address. Make sure it has a public DNS A or AAAA record.`);
    }
  }

  // Refuse if ANY address is internal: we might connect to any of them, and a mixed answer is a classic rebinding trick.
  for (const address of addresses) {
    const verdict = classifyAddress(address);
    if (!verdict.blocked) continue;
    if (opts.allowPrivateNetworks && !verdict.metadata) continue;
    const what = address === host ? `"${host}" is` : `"${host}" resolves to ${address}, which is`;
    const article = /^[aeiou]/i.test(verdict.reason) ? "an" : "a";
    // Metadata addresses stay refused whatever the setting: the advice is for the others.
    return fail("PRIVATE_NETWORK", `${what} ${article} ${verdict.reason} address. ${verdict.metadata ? PUBLIC_HOST_ONLY : LOCAL_RECEIVER_ADVICE}`);
  }

  return { ok: true, addresses };
}
