import { createHash } from 'node:crypto';
import { DEVICE_REPOSITORY, type DeviceRepository, PublishFirmware } from '@hortus/core';
import { expect, startTestServer, type TestServer, testStore } from './harness.js';

/*
 * Which box asks for the firmware manifest. Firmware 1.0.4's updater (esp32FOTA 0.2) sends a bare
 * `GET /api/hardware/update`: no id, no header of its own. Builds that turn the updater's device id on add
 * `?id=<the factory MAC as a decimal number>`. Otherwise the box is the registered one whose onboarding or
 * data requests came from the same address. TRUST_PROXY=on lets each test speak from an address of its own.
 */

interface Manifest {
  readonly type: string;
  readonly version: string;
  readonly url: string;
}

const sha256 = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

describe(`the firmware manifest answers each box for itself (${testStore} store)`, () => {
  let api: TestServer;
  before(async () => {
    api = await startTestServer({ TRUST_PROXY: 'on', UNKNOWN_DEVICE_PER_MINUTE: '1000' });
  });
  after(async () => {
    await api.close();
  });

  let boxes = 0;
  /** A registered box of a fresh group: label 24:6F:28:AB:<n>:01, so it sends 1<n>ab286f24. */
  async function registeredBox(): Promise<{ group: string; sent: string }> {
    boxes += 1;
    const byte = boxes.toString(16).padStart(2, '0');
    const group = api.unique('fw-group');
    await api.seed.group(group);
    await api.seed.device(`24:6F:28:AB:${byte.toUpperCase()}:01`, group);
    return { group, sent: `1${byte}ab286f24` };
  }

  /** Onboarding as firmware `version` sends it, from `address`; answers the box's key. */
  async function onboard(sent: string, address: string, version = '1.0.4'): Promise<string> {
    const reply = await api.call('GET', '/api/hardware', {
      headers: {
        deviceId: sent,
        updateVersion: version,
        lastactive: '4100',
        'content-type': 'application/json',
        'x-forwarded-for': address,
      },
    });
    expect(reply.status).to.equal(200);
    return (reply.json() as { apiKey: string }).apiKey;
  }

  /** The manifest from `address`; undefined for a 204 (nothing for this box). */
  async function manifestFrom(address: string, query = ''): Promise<Manifest | undefined> {
    const reply = await api.call('GET', `/api/hardware/update${query}`, {
      headers: { 'x-forwarded-for': address },
    });
    if (reply.status === 204) {
      expect(reply.text).to.equal('');
      return undefined;
    }
    expect(reply.status).to.equal(200);
    return reply.json() as Manifest;
  }

  const publish = (version: string, group?: string, force = false): Promise<string> => {
    const data = new Uint8Array(4096).fill(boxes + version.length);
    data.set(new TextEncoder().encode(`${version}/${group ?? ''}`));
    return api.container
      .get(PublishFirmware)
      .execute({ data, version, force, ...(group === undefined ? {} : { group }) })
      .then(() => sha256(data));
  };

  it('when nothing is published, then a box that onboarded gets 204: no manifest, so no image-less address', async () => {
    const box = await registeredBox();
    await onboard(box.sent, '10.1.0.1', '1.1.0');

    expect(await manifestFrom('10.1.0.1')).to.equal(undefined);
  });

  it("when an image is published for one group, then only that group's box is offered it; another group's box and an unknown address get nothing", async () => {
    const north = await registeredBox();
    const south = await registeredBox();
    await onboard(north.sent, '10.1.0.2', '1.1.0');
    await onboard(south.sent, '10.1.0.3', '1.1.0');
    const digest = await publish('1.1.5', north.group);

    const toNorth = await manifestFrom('10.1.0.2');

    expect(toNorth?.version).to.equal('1.1.5');
    expect(toNorth?.url).to.match(new RegExp(`/api/hardware/download/${digest}$`, 'u'));
    expect(await manifestFrom('10.1.0.3')).to.equal(undefined);
    expect(await manifestFrom('10.1.0.99')).to.equal(undefined);
  });

  it('when a box posts readings from a new address (a new DHCP lease), then its manifest from there is its own', async () => {
    const box = await registeredBox();
    const apiKey = await onboard(box.sent, '10.1.0.4', '1.0.9');
    const digest = await publish('1.1.0', box.group);

    const posted = await api.call('POST', '/api/box/v1/action/insertOne', {
      headers: { 'content-type': 'application/ejson', 'api-key': apiKey, 'x-forwarded-for': '10.1.0.5' },
      body: JSON.stringify({
        collection: 'datas',
        database: 'Website',
        dataSource: 'Cluster0',
        document: {
          topic: 'esp/air/temperature',
          group: box.group,
          value: '21.37',
          time: { $date: '2025-06-15T14:29:40.000Z' },
        },
      }),
    });
    const manifest = await manifestFrom('10.1.0.5');

    expect(posted.status).to.equal(201);
    expect(manifest?.version).to.equal('1.1.0');
    expect(manifest?.url).to.match(new RegExp(`${digest}$`, 'u'));
  });

  it('when the updater names itself with ?id= (the MAC as a decimal number), then that box is answered wherever it asks from, and an id of no registered box gets nothing', async () => {
    const box = await registeredBox();
    await onboard(box.sent, '10.1.0.6', '1.0.7');
    const decimal = String(parseInt(box.sent, 16));

    const before = await manifestFrom('10.1.0.250', `?id=${decimal}`);
    const digest = await publish('1.0.8', box.group);
    const offered = await manifestFrom('10.1.0.251', `?id=${decimal}`);
    // The address has a box of that group, but the id says the asker is another, unregistered one.
    const stranger = await manifestFrom('10.1.0.6', '?id=1');

    expect(before).to.equal(undefined);
    expect(offered?.version).to.equal('1.0.8');
    expect(offered?.url).to.match(new RegExp(`${digest}$`, 'u'));
    expect(stranger).to.equal(undefined);
  });

  it("when boxes of two groups share one address (a NAT), then neither group's image is offered there", async () => {
    const east = await registeredBox();
    const west = await registeredBox();
    await onboard(east.sent, '10.1.0.7', '1.1.0');
    await onboard(west.sent, '10.1.0.7', '1.1.0');
    await publish('1.2.0', east.group);

    expect(await manifestFrom('10.1.0.7')).to.equal(undefined);
  });

  it('when the box onboarded through another server (or before a restart), then its stored onboarding identifies it', async () => {
    const box = await registeredBox();
    const devices = api.container.get<DeviceRepository>(DEVICE_REPOSITORY);
    const [device] = await devices.listByGroup(box.group);
    if (device === undefined) throw new Error('the box was not registered');
    // As another server of the same store writes it: nothing of it reaches this process's memory.
    await devices.recordOnboarding(
      device.deviceId,
      { at: api.clock.now(), address: '10.1.0.8' },
      { firmwareVersion: '1.0.5' },
    );
    const digest = await publish('1.3.0', box.group);
    // The stored onboardings are read at most once a minute.
    api.clock.advance(61_000);

    const manifest = await manifestFrom('10.1.0.8');

    expect(manifest?.url).to.match(new RegExp(`${digest}$`, 'u'));
  });

  it("when someone sets a box's version to 99.0.0 by onboarding with its MAC, then the box is still offered the published image, never a manifest without one", async () => {
    const box = await registeredBox();
    await onboard(box.sent, '10.1.0.9', '1.1.0');
    const digest = await publish('1.4.0', box.group);
    // The stranger onboards from the box's own address (its NAT), as the box would.
    await onboard(box.sent, '10.1.0.9', '99.0.0');

    const manifest = await manifestFrom('10.1.0.9');

    expect(manifest?.version).to.equal('1.4.0');
    expect(manifest?.url).to.match(new RegExp(`/api/hardware/download/${digest}$`, 'u'));
  });

  it('when a box runs 1.0.4 (no OTA slot) or reported no version, then it is offered nothing, unless the image was published with force', async () => {
    const old = await registeredBox();
    await onboard(old.sent, '10.1.0.10', '1.0.4');
    await publish('1.5.0', old.group);
    const unknownVersion = await registeredBox();
    const reply = await api.call('GET', '/api/hardware', {
      headers: { deviceId: unknownVersion.sent, 'x-forwarded-for': '10.1.0.11' },
    });
    expect(reply.status).to.equal(200);
    await publish('1.5.0', unknownVersion.group);

    expect(await manifestFrom('10.1.0.10')).to.equal(undefined);
    expect(await manifestFrom('10.1.0.11')).to.equal(undefined);

    const forced = await publish('1.5.1', old.group, true);
    const manifest = await manifestFrom('10.1.0.10');
    expect(manifest?.version).to.equal('1.5.1');
    expect(manifest?.url).to.match(new RegExp(`${forced}$`, 'u'));
    expect(await manifestFrom('10.1.0.11')).to.equal(undefined);
  });
});
