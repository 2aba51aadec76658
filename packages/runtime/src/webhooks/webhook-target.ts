import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not target unless an operator allows it: unspecified, loopback, private
 * (RFC 1918, unique local), shared (CGNAT), link-local (cloud metadata) and multicast ranges.
 */
const PRIVATE_RANGES = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const)
    list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of [
    ['::', 128],
    ['::1', 128],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const)
    list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

/** Whether `address` (an IP) is loopback, private, link-local or otherwise not a public target. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPrivateAddress(mapped);
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE_RANGES.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of `url` as an address or name (IPv6 without its brackets). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Why `raw` is not a webhook URL a worker may deliver to, or undefined when it is: http or https,
 * no credentials, and (unless `allowPrivate`) neither a private address nor a name that resolves to
 * one now. A worker checks again at each attempt ({@link publicOnlyLookup}): a name may change.
 */
export async function webhookUrlProblem(
  raw: string,
  options: { allowPrivate: boolean },
): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (options.allowPrivate) return undefined;
  const host = hostOf(url);
  if (host === 'localhost' || host.endsWith('.localhost'))
    return 'targets a loopback address (set CAIRN_WEBHOOK_ALLOW_PRIVATE=true to allow it)';
  const addresses =
    isIP(host) !== 0
      ? [host]
      : await lookup(host, { all: true }).then(
          (found) => found.map((a) => a.address),
          () => [],
        );
  const refused = addresses.find(isPrivateAddress);
  return refused === undefined
    ? undefined
    : `targets a private, loopback or link-local address (${refused}); set CAIRN_WEBHOOK_ALLOW_PRIVATE=true to allow it`;
}

/** The error of a connection refused by {@link publicOnlyLookup}. */
export class PrivateAddressError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
  ) {
    super(
      `${host} resolves to a private, loopback or link-local address (${address}): refused (CAIRN_WEBHOOK_ALLOW_PRIVATE is off)`,
    );
    this.name = 'PrivateAddressError';
  }
}

/**
 * A `lookup` for `http.request` that resolves as usual and refuses a private address: the check
 * holds for the address the connection actually uses (no gap for a name that changes between a
 * check and the connection).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }).then(
    (found) => {
      const refused = found.find((a) => isPrivateAddress(a.address));
      if (refused) {
        callback(new PrivateAddressError(hostname, refused.address), '', 0);
        return;
      }
      if (options.all) callback(null, found);
      else callback(null, found[0]!.address, found[0]!.family);
    },
    (error: NodeJS.ErrnoException) => callback(error, '', 0),
  );
};
