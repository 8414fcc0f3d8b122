import { type Server } from 'node:net';
import { normaliseAddress } from './client-address.js';

/**
 * Gives each client address a share of the server's connections (MAX_CONNECTIONS_PER_ADDRESS), so one
 * client holding hundreds of idle or half-open connections cannot take the whole of MAX_CONNECTIONS from
 * everyone else (health checks among them). A connection beyond its address's share is closed at once.
 * Addresses of trusted proxies are exempt: every client behind them arrives from there.
 */
export function shareConnectionsByAddress(
  server: Server,
  perAddress: number,
  exempt: (address: string) => boolean,
): void {
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = normaliseAddress(socket.remoteAddress ?? '');
    if (exempt(address)) return;
    const held = open.get(address) ?? 0;
    if (held >= perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
