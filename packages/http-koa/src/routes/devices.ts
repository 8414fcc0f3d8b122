import { NotFoundError } from '@hortus/core';
import { groupName, groupQuery, object, text } from './schemas.js';
import { json, type ResponseDoc, type RouterSpec, withUnderscoreId } from './routing.js';

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
      // SPEC 4.4: a group without devices is a 400 "no data found".
      statusFor: { NOT_FOUND: 400 },
      responses: {
        200: {
          description: '`{message: [Device]}`',
          schema: object({ message: { type: 'array', items: { $ref: '#/components/schemas/Device' } } }),
        },
        400: { description: "`{message}` naming the invalid field, or `{message: 'no data found'}`" },
        500: failed,
      },
      handle: async ({ query }, { listDevices }) => {
        const devices = await listDevices.execute({ group: query['group'] });
        if (devices.length === 0) throw new NotFoundError('device', 'no data found');
        return json({ message: devices.map(withUnderscoreId) });
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
      handle: async ({ query }, { createDevice }) => {
        await createDevice.execute({
          deviceId: query['deviceId'],
          group: query['group'],
          type: query['type'],
        });
        return json({ message: 'Device created successfully' }, 201);
      },
    },
  ],
};
