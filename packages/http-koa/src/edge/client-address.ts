import { BlockList, isIP } from 'node:net';
import { type Middleware } from 'koa';
import { type TrustProxy } from '../config.js';

/** An address as written in X-Forwarded-For or seen on the socket, without port, brackets or v4-in-v6 prefix. */
export function normaliseAddress(text: string): string {
  let address = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/u.exec(address);
  if (bracketed?.[1] !== undefined) address = bracketed[1];
  else if (/^[\d.]+:\d+$/u.test(address)) address = address.slice(0, address.lastIndexOf(':'));
  if (/^::ffff:[\d.]+$/iu.test(address)) address = address.slice(7);
  return address.toLowerCase();
}

/**
 * Whether an address (normalised) is a proxy TRUST_PROXY trusts: with a hop count, the peer of every
 * connection is one (the server sits behind that many proxies); with a list, the addresses and subnets in it.
 */
export function trustedProxy(trust: TrustProxy): (address: string) => boolean {
  if ('hops' in trust) {
    const trusted = trust.hops > 0;
    return () => trusted;
  }
  const list = new BlockList();
  for (const entry of trust.proxies) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(normaliseAddress(address), family);
    else list.addSubnet(normaliseAddress(address), Number(bits), family);
  }
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * Finds the client's address from the socket and X-Forwarded-For under TrustProxy (config.ts): the entry
 * the nearest trusted proxy saw, never one the client could have written itself.
 */
export function clientAddressOf(trust: TrustProxy): (socketAddress: string, forwardedFor: string) => string {
  const chainOf = (socketAddress: string, forwardedFor: string): string[] => [
    ...forwardedFor
      .split(',')
      .map(normaliseAddress)
      .filter((entry) => entry !== ''),
    normaliseAddress(socketAddress),
  ];
  if ('hops' in trust) {
    const { hops } = trust;
    return (socketAddress, forwardedFor) => {
      if (hops === 0 || forwardedFor === '') return normaliseAddress(socketAddress);
      const chain = chainOf(socketAddress, forwardedFor);
      return chain[Math.max(0, chain.length - 1 - hops)] ?? '';
    };
  }
  const isTrusted = trustedProxy(trust);
  return (socketAddress, forwardedFor) => {
    const chain = chainOf(socketAddress, forwardedFor);
    for (let index = chain.length - 1; index >= 0; index -= 1) {
      const address = chain[index] ?? '';
      if (!isTrusted(address)) return address;
    }
    return chain[0] ?? '';
  };
}

/** Sets ctx.ip (which the rate limit keys on) to the address TRUST_PROXY makes the client's. */
export function clientAddressMiddleware(trust: TrustProxy): Middleware {
  const clientAddress = clientAddressOf(trust);
  return (ctx, next) => {
    ctx.request.ip = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For'));
    return next();
  };
}
