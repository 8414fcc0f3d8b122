import { CreateDevice, DeleteDevice, type Device, macOfRegisteredId } from '@hortus/core';
import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { fields, say } from '../output.js';
import { registerBoxDeviceCommands } from './device-boxes.js';
import { UsageError } from '../exit-codes.js';
import { createGroupOption, groupOption, outputFor, requireGroup, storeFor, withExamples } from './shared.js';

function showDevice(device: Device): string {
  return fields([
    ['Device ID', device.deviceId],
    ['Group', device.group],
    ['Type', device.type],
    ['ID', device.id],
  ]);
}

export function registerDeviceCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const device = withExamples(
    program.command('device').description('register and list devices (boxes)'),
    'hortus device list --group greenhouse-1',
  );
  withExamples(
    device
      .command('create')
      .description('register a device')
      .argument('<deviceId>', "the box's MAC address in hex, unique across groups")
      .addOption(groupOption())
      .requiredOption('-t, --type <type>', 'device type, e.g. sensor-box')
      .addOption(createGroupOption())
      .option('--any-id', 'register an id that is no MAC (as older devices of the original service had)')
      .action(
        async (
          deviceId: string,
          options: { group: string; type: string; createGroup?: boolean; anyId?: boolean },
          command: Command,
        ) => {
          // A box is found by its MAC; an id in no MAC form would never match the box it was meant for.
          if (options.anyId !== true && macOfRegisteredId(deviceId.trim()) === undefined) {
            throw new UsageError(
              `${deviceId} is not a MAC: give it as on the label (24:6F:28:AA:00:01, 24-6f-28-aa-00-01 or ` +
                '246f28aa0001) or as the box sends it (100aa286f24); --any-id registers it as it is',
            );
          }
          const created = await store(command, async (useCase) => {
            await requireGroup(useCase, options.group, options.createGroup === true);
            return useCase(CreateDevice).execute({ deviceId, group: options.group, type: options.type });
          });
          outputFor(io, command).result(created, showDevice);
        },
      ),
    'hortus device create 24:6F:28:AA:00:01 --group greenhouse-1 --type sensor-box',
  );
  registerBoxDeviceCommands(device, io);
  withExamples(
    device
      .command('delete')
      .description('delete a device of a group')
      .argument('<deviceId>', "the box's MAC address in hex")
      .addOption(groupOption())
      .action(async (deviceId: string, options: { group: string }, command: Command) => {
        const deleted = await store(command, (useCase) =>
          useCase(DeleteDevice).execute({ group: options.group, deviceId }),
        );
        outputFor(io, command).result(deleted, (d) => say`Deleted device ${d.deviceId} of group ${d.group}.`);
      }),
    'hortus device delete 24:6F:28:AA:00:01 --group greenhouse-1',
  );
}
