import { actorOf, type Caller, type DeviceView, NotFoundError } from '@hortus/core';
import { groupName, groupQuery, object, text } from './schemas.js';
import { json, type ResponseDoc, type RouterSpec } from './routing.js';

/** The groups a caller is limited to; undefined for one that reaches every group (admin, operator, open API). */
function limitedGroupsOf(caller: Caller): readonly string[] | undefined {
  if (caller.kind === 'user') return [caller.group];
  if (caller.kind === 'key' && caller.key.groups.length > 0) return caller.key.groups;
  return undefined;
}

/** The device as the original service showed it (docs/api.md, Devices), followed by what the box tracking adds (never its key digests). */
function deviceAnswer(device: DeviceView): Record<string, unknown> {
  return {
    _id: device.id,
    deviceId: device.deviceId,
    group: device.group,
    type: device.type,
    ...(device.label === undefined ? {} : { macAddress: device.label }),
    ...(device.boxId === undefined ? {} : { boxId: device.boxId }),
    locked: device.locked === true,
    silent: device.silent,
    ...(device.lastSeenAt === undefined ? {} : { lastSeen: device.lastSeenAt.toISOString() }),
    ...(device.firmwareVersion === undefined ? {} : { firmwareVersion: device.firmwareVersion }),
    ...(device.bootedAt === undefined ? {} : { bootedAt: device.bootedAt.toISOString() }),
    onboardings: (device.onboardings ?? []).map(({ at, address }) => ({ at: at.toISOString(), address })),
  };
}

const failed: ResponseDoc = { description: "`{message: 'Internal Server Error'}`" };

export const deviceRoutes: RouterSpec = {
  prefix: '/api/devices',
  tag: 'Devices',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/',
      access: 'group',
      writes: false,
      summary: 'Devices of a group',
      query: groupQuery,
      // docs/api.md, Devices: a group without devices is a 400 "no data found".
      statusFor: { NOT_FOUND: 400 },
      responses: {
        200: {
          description: '`{message: [Device]}`',
          schema: object({ message: { type: 'array', items: { $ref: '#/components/schemas/Device' } } }),
        },
        400: { description: "`{message}` naming the invalid field, or `{message: 'no data found'}`" },
        500: failed,
      },
      handle: async ({ query }, { listDeviceViews }) => {
        const devices = await listDeviceViews.execute({ group: query['group'] });
        if (devices.length === 0) throw new NotFoundError('device', 'no data found');
        return json({ message: devices.map(deviceAnswer) });
      },
    },
    {
      method: 'get',
      path: '/create',
      access: 'group',
      writes: true,
      summary: 'Create a device (a GET, as deployed clients call it)',
      query: object(
        {
          deviceId: text("The box's MAC address in hex, e.g. 24:6F:28:AA:00:01", 64),
          group: groupName(),
          type: text('Device type'),
        },
        ['deviceId', 'group', 'type'],
      ),
      responses: {
        201: { description: "`{message: 'Device created successfully'}`" },
        400: { description: '`{message}` naming the invalid field' },
        409: {
          description:
            '`{message}`: a device with that deviceId exists, or the group holds MAX_DEVICES_PER_GROUP devices',
        },
        500: failed,
      },
      handle: async ({ query, caller }, { createDevice }) => {
        const input = {
          deviceId: query['deviceId'],
          group: query['group'],
          type: query['type'],
          actor: actorOf(caller),
        };
        // A caller limited to groups may not learn that another group holds the id (ids are unique across
        // groups): it is answered as a success would be, and left for an administrator (`device pending`).
        const limitedTo = limitedGroupsOf(caller);
        if (limitedTo === undefined) await createDevice.execute(input);
        else await createDevice.executeLimited(input, limitedTo);
        return json({ message: 'Device created successfully' }, 201);
      },
    },
  ],
};
