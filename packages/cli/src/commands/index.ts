import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { registerActionCommands } from './action.js';
import { registerBoxCommands } from './box.js';
import { registerDeviceCommands } from './device.js';
import { registerFirmwareCommands } from './firmware.js';
import { registerGroupCommands } from './group.js';
import { registerNotificationCommands } from './notifications.js';
import { registerReadingCommands } from './readings.js';
import { registerSeedCommands } from './seed.js';
import { registerUserCommands } from './user.js';

export { withExamples } from './shared.js';

/** The commands on stored data, one file per resource; the order here is the order in --help. */
export function registerDataCommands(program: Command, io: RunIo): void {
  registerGroupCommands(program, io);
  registerUserCommands(program, io);
  registerDeviceCommands(program, io);
  registerFirmwareCommands(program, io);
  registerBoxCommands(program, io);
  registerActionCommands(program, io);
  registerNotificationCommands(program, io);
  registerReadingCommands(program, io);
  registerSeedCommands(program, io);
}
