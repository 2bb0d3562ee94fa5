import { describe, expect, it } from "vitest";
import { checkWebhookUrl, classifyAddress } from "../../src/modules/webhooks/url-safety.js";
import type { CheckWebhookUrlOptions, HostResolver } from "../../src/modules/webhooks/url-safety.js";

// IP literals must be judged without any DNS lookup (and nothing here ever connects).
const noDns: HostResolver = async (host) => {
  throw new Error(`unexpected DNS lookup for ${host}`);
};
const resolvesTo =
  (...addresses: string[]): HostResolver =>
  async () =>
    addresses;

const PROD: CheckWebhookUrlOptions = { environment: "PRODUCTION", allowPrivateNetworks: false, resolve: noDns };
const SANDBOX: CheckWebhookUrlOptions = { environment: "SANDBOX", allowPrivateNetworks: false, resolve: noDns };

async function expectRefused(url: string, opts: CheckWebhookUrlOptions, code: string): Promise<string> {
  const result = await checkWebhookUrl(url, opts);
  if (result.ok) throw new Error(`expected ${url} to be refused with ${code}`);
  expect(result.code).toBe(code);
  expect(result.message.length).toBeGreaterThan(20);
  return result.message;
}

describe("checkWebhookUrl: private and special addresses", () => {
  it.each([
    "https://10.0.0.5/hook",
    "https://192.168.1.1/hook",
    "https://172.16.0.1/hook",
    "https://172.31.255.255/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://169.254.10.10/",
    "https://127.0.0.1/hook",
    "https://127.1.2.3:8443/hook",
    "https://[::1]/hook",
    "https://[::]/hook",
    "https://0.0.0.0/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[::ffff:7f00:1]/hook",
    "https://[::ffff:10.1.2.3]/hook",
    "https://[::ffff:169.254.169.254]/hook",
    "https://[fd00:ec2::254]/hook",
    "https://[fc00::1]/hook",
    "https://[fe80::1]/hook",
    "https://[ff02::1]/hook",
    "https://100.64.0.1/hook",
    "https://198.18.0.1/hook",
    "https://198.19.255.255/hook",
    "https://192.0.2.10/hook",
    "https://198.51.100.7/hook",
    "https://203.0.113.9/hook",
    "https://[2001:db8::1]/hook",
    "https://224.0.0.1/hook",
    "https://239.255.255.250/hook",
    "https://240.0.0.1/hook",
    "https://255.255.255.255/hook",
    "https://[64:ff9b::a00:1]/hook", // NAT64 of 10.0.0.1
    // WHATWG URL normalises these to 127.0.0.1 before we judge them.
    "https://2130706433/hook",
    "https://0x7f.1/hook",
  ])("refuses %s without DNS", async (url) => {
    await expectRefused(url, PROD, "PRIVATE_NETWORK");
  });

  it("refuses a hostname that resolves to a private address", async () => {
    const message = await expectRefused("https://internal.example.com/hook", { ...PROD, resolve: resolvesTo("10.1.2.3") }, "PRIVATE_NETWORK");
    expect(message).toContain("internal.example.com");
    expect(message).toContain("10.1.2.3");
    expect(message).toMatch(/public/i);
    // Both ways to a receiver on the partner's machine, neither needing the internet.
    expect(message).toContain("partner-listen");
    expect(message).toContain("WEBHOOK_ALLOW_PRIVATE_NETWORKS=true");
    expect(message).not.toMatch(/tunnel/i);
  });

  it("names no way around the refusal of a metadata address, which the setting does not lift", async () => {
    const message = await expectRefused("http://169.254.169.254/latest/meta-data/", SANDBOX, "PRIVATE_NETWORK");
    expect(message).not.toContain("WEBHOOK_ALLOW_PRIVATE_NETWORKS");
  });

  it("refuses when ANY resolved address is private (mixed answer)", async () => {
    await expectRefused("https://mixed.example.com/hook", { ...PROD, resolve: resolvesTo("93.184.215.14", "127.0.0.1") }, "PRIVATE_NETWORK");
    await expectRefused("https://mixed6.example.com/hook", { ...PROD, resolve: resolvesTo("2606:4700::6810:85e5", "::ffff:192.168.0.1") }, "PRIVATE_NETWORK");
  });

  it.each(["metadata.google.internal", "metadata", "METADATA.google.internal.", "metadata."])(
    "refuses the metadata host name %s even if it resolves publicly",
    async (host) => {
      await expectRefused(`https://${host}/computeMetadata/v1/`, { ...PROD, resolve: resolvesTo("93.184.215.14") }, "PRIVATE_NETWORK");
    },
  );

  it("allows public addresses (injected resolver; nothing is contacted)", async () => {
    const v4 = await checkWebhookUrl("https://hooks.partner.example/ingest?x=1", { ...PROD, resolve: resolvesTo("93.184.215.14") });
    expect(v4).toMatchObject({ ok: true, addresses: ["93.184.215.14"] });
    if (v4.ok) expect(v4.url.href).toBe("https://hooks.partner.example/ingest?x=1");

    const v6 = await checkWebhookUrl("https://hooks.partner.example/", {
      ...PROD,
      resolve: resolvesTo("2606:4700::6810:85e5", "104.16.133.229"),
    });
    expect(v6).toMatchObject({ ok: true, addresses: ["2606:4700::6810:85e5", "104.16.133.229"] });

    // NAT64 (DNS64) answers for public IPv4 hosts must keep working on IPv6-only networks.
    const nat64 = await checkWebhookUrl("https://hooks.partner.example/", { ...PROD, resolve: resolvesTo("64:ff9b::5db8:d70e") });
    expect(nat64.ok).toBe(true);

    // Public IP literals need no DNS.
    expect((await checkWebhookUrl("https://93.184.215.14/hook", PROD)).ok).toBe(true);
    expect((await checkWebhookUrl("https://[2606:4700::6810:85e5]/hook", PROD)).ok).toBe(true);
  });

  it("admits loopback and private addresses when allowPrivateNetworks is set", async () => {
    const opts: CheckWebhookUrlOptions = { environment: "SANDBOX", allowPrivateNetworks: true, resolve: noDns };
    expect(await checkWebhookUrl("http://127.0.0.1:3000/hook", opts)).toMatchObject({ ok: true, addresses: ["127.0.0.1"] });
    expect((await checkWebhookUrl("http://[::1]:3000/hook", opts)).ok).toBe(true);
    expect((await checkWebhookUrl("https://192.168.1.1/hook", opts)).ok).toBe(true);
    expect((await checkWebhookUrl("https://dev.local/hook", { ...opts, resolve: resolvesTo("10.0.0.5") })).ok).toBe(true);
  });

  // Every form a cloud metadata service can be written in: refused even where private networks are allowed, judged
  // from the URL alone (no DNS, nothing contacted).
  it.each([
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/", // 169.254.169.254 as one decimal number
    "http://0xa9fea9fe/",
    "http://0251.0376.0251.0376/",
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://169.254.43518/",
    "http://169.254.169.254./",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[::a9fe:a9fe]/", // IPv4-compatible (deprecated) form
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::1]/", // 6to4 of the same address
    "http://[fd00:ec2::254]/",
    "http://[FD00:EC2:0:0:0:0:0:254]/",
    "http://[::ffff:100.100.100.200]/",
    "http://100.100.100.200/latest/meta-data/", // Alibaba Cloud
    "http://1684301000/", // 100.100.100.200 as one decimal number
    "http://0x646464c8/",
    "http://0144.0144.0144.0310/",
    "http://100.100.100.200./",
    "http://192.0.0.192/", // Oracle Cloud (legacy)
    "http://168.63.129.16/", // Azure WireServer
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.GOOGLE.INTERNAL./",
    "http://metadata.google.internal../",
  ])("refuses the metadata address %s with private networks allowed", async (url) => {
    const message = await expectRefused(url, { environment: "SANDBOX", allowPrivateNetworks: true, resolve: noDns }, "PRIVATE_NETWORK");
    expect(message).toMatch(/metadata/);
  });

  it("still refuses cloud metadata endpoints when allowPrivateNetworks is set", async () => {
    const opts: CheckWebhookUrlOptions = { environment: "SANDBOX", allowPrivateNetworks: true, resolve: noDns };
    await expectRefused("http://169.254.169.254/latest/meta-data/", opts, "PRIVATE_NETWORK");
    await expectRefused("http://[fd00:ec2::254]/", opts, "PRIVATE_NETWORK");
    await expectRefused("http://[::ffff:169.254.169.254]/", opts, "PRIVATE_NETWORK");
    await expectRefused("http://metadata.google.internal/", opts, "PRIVATE_NETWORK");
    await expectRefused("http://sneaky.example/", { ...opts, resolve: resolvesTo("169.254.169.254") }, "PRIVATE_NETWORK");
  });
});

describe("checkWebhookUrl: URL shape and scheme", () => {
  it("refuses http in PRODUCTION and allows it in SANDBOX", async () => {
    const message = await expectRefused("http://hooks.partner.example/", { ...PROD, resolve: resolvesTo("93.184.215.14") }, "INSECURE_SCHEME");
    expect(message).toMatch(/https/);
    const sandbox = await checkWebhookUrl("http://hooks.partner.example/", { ...SANDBOX, resolve: resolvesTo("93.184.215.14") });
    expect(sandbox.ok).toBe(true);
  });

  it.each(["ftp://hooks.partner.example/", "file:///etc/passwd", "javascript:alert(1)", "ws://hooks.partner.example/"])(
    "refuses the non-http scheme %s",
    async (url) => {
      await expectRefused(url, SANDBOX, "INSECURE_SCHEME");
    },
  );

  it("refuses userinfo without echoing the credentials", async () => {
    const message = await expectRefused("https://user:hunter2@hooks.partner.example/", { ...PROD, resolve: resolvesTo("93.184.215.14") }, "INVALID_URL");
    expect(message).not.toContain("hunter2");
    await expectRefused("https://user@hooks.partner.example/", { ...PROD, resolve: resolvesTo("93.184.215.14") }, "INVALID_URL");
  });

  it.each(["", "not a url", "/relative/path", "hooks.partner.example/hook", "https://", "https://[::1/"])("refuses the unparseable URL %j", async (url) => {
    await expectRefused(url, PROD, "INVALID_URL");
  });

  it("reports hosts that do not resolve", async () => {
    const nxdomain: HostResolver = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND nope.invalid"), { code: "ENOTFOUND" });
    };
    const message = await expectRefused("https://nope.invalid/", { ...PROD, resolve: nxdomain }, "UNRESOLVABLE_HOST");
    expect(message).toContain("nope.invalid");
    expect(message).toContain("ENOTFOUND");
    await expectRefused("https://empty.example/", { ...PROD, resolve: resolvesTo() }, "UNRESOLVABLE_HOST");
    await expectRefused("https://junk.example/", { ...PROD, resolve: resolvesTo("not-an-ip") }, "UNRESOLVABLE_HOST");
  });
});

describe("classifyAddress", () => {
  it("labels ranges so messages can explain the refusal", () => {
    expect(classifyAddress("10.0.0.1")).toMatchObject({ blocked: true, reason: "private" });
    expect(classifyAddress("::ffff:127.0.0.1")).toMatchObject({ blocked: true, reason: expect.stringContaining("loopback") });
    expect(classifyAddress("169.254.169.254")).toMatchObject({ blocked: true, metadata: true });
    expect(classifyAddress("fe80::1%eth0")).toMatchObject({ blocked: true, reason: "link-local" });
    expect(classifyAddress("8.8.8.8")).toEqual({ blocked: false });
    expect(classifyAddress("2001:4860:4860::8888")).toEqual({ blocked: false });
    expect(classifyAddress("nonsense")).toMatchObject({ blocked: true });
  });
});
