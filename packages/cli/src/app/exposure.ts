import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { type AuthMode } from '@hortus/http-koa';

/** Whether an address or host name reaches this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/gu, '').toLowerCase();
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  return name === '::1' || /^::ffff:127\./u.test(name);
}

/**
 * The URLs a server listening on `host` answers: for a wildcard (0.0.0.0, ::), one per address of this
 * machine's interfaces, so the operator sees what the network sees.
 */
export function listeningAddresses(host: string, port: number, scheme: 'http' | 'https' = 'http'): string[] {
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  if (!wildcard) return [urlOf(scheme, host, port)];
  const addresses = Object.values(networkInterfaces())
    .flat()
    .filter((entry) => entry !== undefined)
    .filter((entry) => host !== '0.0.0.0' || entry.family === 'IPv4')
    .map((entry) => entry.address);
  return [...new Set(addresses)].map((address) => urlOf(scheme, address, port));
}

function urlOf(scheme: string, address: string, port: number): string {
  return isIP(address) === 6 ? `${scheme}://[${address}]:${port}` : `${scheme}://${address}:${port}`;
}

/** Access control as the start log states it: on (AUTH=on or keys in use) or off, and why. */
export function accessState(mode: AuthMode, keysInUse: boolean | undefined): { on: boolean; reason: string } {
  if (mode === 'on') return { on: true, reason: 'AUTH=on' };
  if (mode === 'off') return { on: false, reason: 'AUTH=off' };
  // Unknown (the store did not answer): requests are refused until it does, so it counts as on.
  if (keysInUse === undefined)
    return { on: true, reason: 'AUTH=auto; the store did not say whether keys exist' };
  return keysInUse
    ? { on: true, reason: 'AUTH=auto and access keys exist' }
    : { on: false, reason: 'AUTH=auto and no access key exists yet' };
}

/** What anyone who reaches an open server can do: the warning's text. */
export const OPEN_TO_NETWORK =
  'anyone who can reach these addresses can read every group, switch devices, change automations and ' +
  'alerts, and delete data: create an admin key (hortus keys create --name ops --kind admin) or set AUTH=on, or ' +
  'listen on 127.0.0.1 (unset HOST)';
