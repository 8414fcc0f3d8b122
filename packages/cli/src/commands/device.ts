import { CreateDevice, DeleteDevice, type Device } from '@hortus/core';
import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { fields, say } from '../output.js';
import { registerBoxDeviceCommands } from './device-boxes.js';
import { groupOption, outputFor, storeFor, withExamples } from './shared.js';

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
      .action(async (deviceId: string, options: { group: string; type: string }, command: Command) => {
        const created = await store(command, (useCase) =>
          useCase(CreateDevice).execute({ deviceId, group: options.group, type: options.type }),
        );
        outputFor(io, command).result(created, showDevice);
      }),
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
