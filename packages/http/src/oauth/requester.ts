// Who is asking, for the limits on unauthenticated routes (registrations per hour). Behind the TLS
// proxy the README asks for, every request comes from the proxy's address, so one caller would use
// up everyone's allowance: with ENGAGE_TRUSTED_PROXY_HOPS set to the number of proxies in front,
// the address the outermost of them saw is taken from X-Forwarded-For (counted from the right, so
// a caller cannot choose it by sending the header). IPv6 addresses count by their /64, which one
// host is routinely given whole.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export function requesterOf(req: Pick<IncomingMessage, 'headers' | 'socket'>, trustedProxyHops: number): string {
  const addresses = [req.socket.remoteAddress ?? ''];
  if (trustedProxyHops > 0) {
    const header = req.headers['x-forwarded-for'];
    const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((part) => part.trim());
    // Nearest first: the socket is the nearest proxy, the header's last entry the address it saw.
    for (let hop = 1; hop <= trustedProxyHops && hop <= forwarded.length; hop++) {
      const address = withoutPort(forwarded[forwarded.length - hop] as string);
      if (isIP(address) === 0) break; // a proxy that wrote no address: trust goes no further
      addresses.push(address);
    }
  }
  return addressGroup(addresses[addresses.length - 1] as string);
}

/** Some proxies write the port too: `192.0.2.1:5555`, `[2001:db8::1]:443`. */
function withoutPort(entry: string): string {
  return /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(entry)?.[1] ?? /^\[([0-9a-fA-F:.]+)\](?::\d+)?$/.exec(entry)?.[1] ?? entry;
}

/** An IPv4 address as it is (mapped IPv6 forms included); an IPv6 address as its /64; anything else as one shared group. */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return mapped;
  if (isIP(address) === 4) return address;
  if (isIP(address) !== 6) return 'unknown';
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts] : headParts;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** The /48 of an IPv6 requester (addressGroup's a:b:c:d::/64), a site's usual allocation; undefined for any other. */
export function siteOf(requester: string): string | undefined {
  const groups = /^([0-9a-f]+):([0-9a-f]+):([0-9a-f]+):[0-9a-f]+::\/64$/.exec(requester);
  return groups ? `${groups[1]}:${groups[2]}:${groups[3]}::/48` : undefined;
}
