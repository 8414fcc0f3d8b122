import { type Command } from 'commander';
import { type RunIo } from '../io.js';
import { registerActionCommands } from './action.js';
import { registerAuditCommand } from './audit.js';
import { registerBackupCommand, registerRestoreCommand } from './backup.js';
import { registerBoxCommands } from './box.js';
import { registerConfigCommands } from './config.js';
import { registerDeviceCommands } from './device.js';
import { registerFirmwareCommands } from './firmware.js';
import { registerGroupCommands } from './group.js';
import { registerKeyCommands } from './keys.js';
import { registerMigrateCommand } from './migrate.js';
import { registerNotificationCommands } from './notifications.js';
import { registerReadingCommands } from './readings.js';
import { registerSeedCommands } from './seed.js';
import { registerServeCommand } from './serve.js';
import { registerStoreCommands } from './store.js';
import { registerUserCommands } from './user.js';

export { withExamples } from './shared.js';

/** Every command of the CLI, one file per resource; the order here is the order in --help. */
export function registerCommands(program: Command, io: RunIo): void {
  registerServeCommand(program, io);
  registerGroupCommands(program, io);
  registerUserCommands(program, io);
  registerDeviceCommands(program, io);
  registerFirmwareCommands(program, io);
  registerBoxCommands(program, io);
  registerActionCommands(program, io);
  registerNotificationCommands(program, io);
  registerReadingCommands(program, io);
  registerSeedCommands(program, io);
  registerKeyCommands(program, io);
  registerAuditCommand(program, io);
  registerBackupCommand(program, io);
  registerRestoreCommand(program, io);
  registerMigrateCommand(program, io);
  registerStoreCommands(program, io);
  registerConfigCommands(program, io);
}
