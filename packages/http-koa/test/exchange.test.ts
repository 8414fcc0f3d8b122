import 'reflect-metadata';
import { createServer, get, type RequestListener, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { CapturingLogger } from '@hortus/test-support';
import {
  answering,
  type BodyParsers,
  buildRoutes,
  type HttpUseCases,
  json,
  pollLane,
  type RouterSpec,
} from '@hortus/http-koa';
import Koa from 'koa';
import { expect } from './harness.js';

/** A polled route that answers what its input says of the request: its headers, host and scheme. */
const probe: RouterSpec = {
  prefix: '/probe',
  tag: 'probe',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/echo',
      access: 'open',
      writes: false,
      summary: 'What the route sees of the request',
      responses: { 200: { description: 'what it sees' } },
      entityTag: (input) =>
        Promise.resolve(`W/"${String(input.headers?.['x-probe'])}.${String(input.host)}"`),
      cacheByTag: true,
      handle: (input) =>
        Promise.resolve(
          json({
            probe: input.headers?.['x-probe'],
            host: input.host,
            hostname: input.hostname,
            secure: input.secure,
            clientAddress: input.clientAddress,
          }),
        ),
    },
  ],
};

const noUseCases = {} as HttpUseCases;

async function listen(handle: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The probe route behind Koa alone, and behind the poll lane in front of the same Koa. */
async function doors(proxy: boolean): Promise<{
  koa: string;
  lane: string;
  koaAnswered: () => number;
  close: () => void;
}> {
  const app = new Koa();
  app.proxy = proxy;
  app.use(buildRoutes([probe], noUseCases, {} as BodyParsers, answering()));
  const viaKoa = app.callback();
  let fallbacks = 0;
  const logger = new CapturingLogger();
  const lane = pollLane(
    {
      routers: [probe],
      useCases: noUseCases,
      answering: answering(),
      logger,
      requestLogger: undefined,
      metrics: undefined,
      access: undefined,
      allowedOrigins: new Set(),
      checkHost: undefined,
      proxy,
      clientFaults: logger,
      bodyLimitBytes: 1000,
      clientAddress: undefined,
      limiter: undefined,
      shared: undefined,
    },
    (request, response) => {
      fallbacks += 1;
      void viaKoa(request, response);
    },
  );
  const koa = await listen((request, response) => void viaKoa(request, response));
  const laned = await listen(lane);
  return {
    koa: koa.url,
    lane: laned.url,
    koaAnswered: () => fallbacks,
    close: () => {
      koa.server.close();
      laned.server.close();
    },
  };
}

/** Node's client, not fetch: it sends the Host header as given. */
function seen(url: string, headers: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(`${url}/probe/echo`, { headers }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        try {
          expect(response.statusCode, text).to.equal(200);
          resolve(JSON.parse(text));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    }).on('error', reject);
  });
}

describe('One exchange for every door', () => {
  it('when a polled route reads the request headers, host and scheme, then the poll lane gives it what Koa gives it', async () => {
    const served = await doors(false);
    try {
      const headers = { 'x-probe': 'p-1', host: 'greenhouse.example:8080' };
      const viaKoa = await seen(served.koa, headers);
      expect(viaKoa).to.deep.equal({
        probe: 'p-1',
        host: 'greenhouse.example:8080',
        hostname: 'greenhouse.example',
        secure: false,
        clientAddress: '127.0.0.1',
      });
      expect(await seen(served.lane, headers)).to.deep.equal(viaKoa);
      expect(served.koaAnswered()).to.equal(0);
    } finally {
      served.close();
    }
  });

  it('when a trusted proxy forwards the host and scheme, then the poll lane reads them as Koa does', async () => {
    const served = await doors(true);
    try {
      const headers = {
        'x-probe': 'p-2',
        host: 'internal:3000',
        'x-forwarded-host': 'greenhouse.example, other.example',
        'x-forwarded-proto': 'HTTPS',
      };
      const viaKoa = await seen(served.koa, headers);
      expect(viaKoa).to.deep.include({
        host: 'greenhouse.example',
        hostname: 'greenhouse.example',
        secure: true,
      });
      expect(await seen(served.lane, headers)).to.deep.equal(viaKoa);
      expect(served.koaAnswered()).to.equal(0);
    } finally {
      served.close();
    }
  });

  it('when the host is one Koa reads through a URL parser (an IPv6 literal), then the lane leaves the request to Koa', async () => {
    const served = await doors(false);
    try {
      const headers = { 'x-probe': 'p-3', host: '[::1]:8080' };
      const viaKoa = await seen(served.koa, headers);
      expect(viaKoa).to.deep.include({ host: '[::1]:8080', hostname: '[::1]' });
      expect(await seen(served.lane, headers)).to.deep.equal(viaKoa);
      expect(served.koaAnswered()).to.equal(1);
    } finally {
      served.close();
    }
  });
});
