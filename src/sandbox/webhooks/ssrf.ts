import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { SandboxError } from '../http/sandbox-error.ts';

/** Resolves a hostname to every address it has (injectable: tests and offline machines). */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const dnsResolver: HostResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** Spec 6.3 rule 2 lists 10/8, 127/8, 169.254/16, 172.16/12, 192.168/16, ::1 and fc00::/7 ("include"); the rest are other reserved ranges. */
const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96], ['100::', 64],
] as const) BLOCKED.addSubnet(net, bits, 'ipv6');

export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  // BlockList also matches IPv4-mapped IPv6 (::ffff:127.0.0.1) against the IPv4 rules.
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The anti-SSRF check of spec 6.3, run at registration and before every delivery. With
 * `allowInsecureReceivers` (the sandbox default, for local receivers) it only requires an
 * http(s) URL; the real service never relaxes it.
 */
export class ReceiverPolicy {
  readonly allowInsecure: boolean;
  readonly #resolve: HostResolver;

  constructor(allowInsecure: boolean, resolve: HostResolver) {
    this.allowInsecure = allowInsecure;
    this.#resolve = resolve;
  }

  /** Why `url` is refused, or null when a delivery may go there. */
  async blockReason(url: URL): Promise<string | null> {
    if (this.allowInsecure) {
      return url.protocol === 'https:' || url.protocol === 'http:' ? null : `scheme ${url.protocol} is not HTTP(S)`;
    }
    if (url.protocol !== 'https:') return `only https:// receivers are allowed, got ${url.protocol}//`;
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0) return isBlockedAddress(host) ? `address ${host} is in a private or reserved range` : null;
    let addresses: string[];
    try {
      addresses = await this.#resolve(host);
    } catch {
      return `host ${host} does not resolve`;
    }
    if (addresses.length === 0) return `host ${host} does not resolve`;
    const blocked = addresses.find(isBlockedAddress);
    return blocked ? `host ${host} resolves to ${blocked}, a private or reserved address` : null;
  }

  /** Registration: 400 SSRF_BLOCKED with the reason. */
  async assertAllowed(url: URL): Promise<void> {
    const reason = await this.blockReason(url);
    if (reason) throw new SandboxError('SSRF_BLOCKED', `Webhook URL refused by the anti-SSRF check: ${reason}.`);
  }
}
