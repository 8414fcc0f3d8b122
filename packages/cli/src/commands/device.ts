import {
  ApproveDeviceMove,
  ClaimDevice,
  ClearPendingDevices,
  CreateDevice,
  DeleteDevice,
  type Device,
  type DeviceView,
  ListDeviceViews,
  ListPendingDevices,
  macOfRegisteredId,
  RotateDeviceKey,
  SetDeviceLock,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, localTime, say, table } from '../output.js';
import {
  consoleActor,
  createGroupOption,
  groupOption,
  listOrNote,
  outputFor,
  requireGroup,
  storeFor,
  withExamples,
} from './shared.js';

/** Said wherever pending boxes are listed: a box stops asking after its 50 tries at boot. */
export const GAVE_UP_NOTE =
  'A box asks 50 times (about a minute and a half) at boot, then gives up until it is power-cycled: after ' +
  'claiming a box whose tries stopped rising, switch it off and on again.';

function uptimeOf(device: Device, now: Date): string {
  if (device.bootedAt === undefined) return '';
  const seconds = Math.max(0, Math.round((now.getTime() - device.bootedAt.getTime()) / 1000));
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return days > 0 ? `${days}d ${hours}h` : hours > 0 ? `${hours}h ${minutes}m` : `${minutes}m`;
}

/** A locked device's refused onboarding from another address, as the state column shows it. */
function moveOf(device: Device): string[] {
  const move = device.moveRequest;
  if (move === undefined) return [];
  return move.approved === true
    ? [`move to ${move.address} approved`]
    : [`refused from ${move.address} at ${localTime(move.at)} (approve-move to allow)`];
}

function stateOf(device: DeviceView): string {
  const states = [
    ...(device.locked === true ? ['locked'] : []),
    ...moveOf(device),
    ...(device.silent ? ['silent'] : []),
    ...(device.previousKeyGeneration === undefined ? [] : ['key rotating']),
  ];
  return states.length === 0
    ? device.onboardings === undefined
      ? 'never onboarded'
      : 'ok'
    : states.join(', ');
}

function showDevice(device: Device): string {
  return fields([
    ['Device ID', device.deviceId],
    ['Group', device.group],
    ['Type', device.type],
    ['Locked', device.locked === true ? 'yes (onboards only from its last address)' : 'no'],
    ...(device.moveRequest === undefined
      ? []
      : [
          [
            'Refused onboarding',
            `${localTime(device.moveRequest.at)} from ${device.moveRequest.address}` +
              (device.moveRequest.approved === true ? ' (approved: accepted once from there)' : ''),
          ] as const,
        ]),
    ['Key generation', device.keyGeneration ?? 0],
    ...(device.previousKeyGeneration === undefined
      ? []
      : [['Old key works until', 'the box onboards again (its next boot)'] as const]),
  ]);
}

/** `hortus device list`, `pending`, `claim`, `lock`, `unlock`, `rotate-key`: the registry of boxes. */
function registerBoxDeviceCommands(device: Command, io: RunIo): void {
  const store = storeFor(io);
  withExamples(
    device
      .command('list')
      .description(
        'list devices with both id forms, last seen, firmware, uptime and state (silent, locked); every group unless --group',
      )
      .option('-g, --group <name>', 'only the devices of this group')
      .action(async (options: { group?: string }, command: Command) => {
        const devices = await store(command, (useCase) => useCase(ListDeviceViews).execute(options));
        const now = new Date();
        outputFor(io, command).result(devices, (all) =>
          listOrNote(
            all,
            options.group === undefined
              ? 'No devices are registered.'
              : say`No devices in group ${options.group}.`,
            (rows) =>
              table(
                [
                  'DEVICE ID',
                  'BOX SENDS',
                  'GROUP',
                  'TYPE',
                  'LAST SEEN',
                  'FIRMWARE',
                  'UPTIME',
                  'LAST ONBOARDING',
                  'STATE',
                ],
                rows.map((d) => [
                  d.label ?? d.deviceId,
                  d.boxId ?? '',
                  d.group,
                  d.type,
                  d.lastSeenAt ?? '',
                  d.firmwareVersion ?? '',
                  uptimeOf(d, d.lastSeenAt ?? now),
                  d.onboardings?.[0] === undefined
                    ? ''
                    : `${localTime(d.onboardings[0].at)} from ${d.onboardings[0].address}`,
                  stateOf(d),
                ]),
              ),
          ),
        );
      }),
    'hortus device list',
    'hortus device list --group greenhouse-1 --json',
  );
  withExamples(
    device
      .command('pending')
      .description(
        'list boxes that asked to onboard but are not registered in the last 7 days (claim one to register it); --clear forgets them',
      )
      .addOption(
        new Option(
          '--clear [id]',
          'forget every pending box, or only this one (the id it sent or its label MAC)',
        ),
      )
      .action(async (options: { clear?: string | true }, command: Command) => {
        if (options.clear !== undefined) {
          const id = options.clear === true ? undefined : options.clear;
          const cleared = await store(command, (useCase) =>
            useCase(ClearPendingDevices).execute(id === undefined ? {} : { id }),
          );
          outputFor(io, command).result({ cleared }, ({ cleared: count }) =>
            count === 1 ? 'Forgot 1 pending box.' : `Forgot ${count} pending boxes.`,
          );
          return;
        }
        const pending = await store(command, (useCase) => useCase(ListPendingDevices).execute());
        outputFor(io, command).result(pending, (all) =>
          listOrNote(all, 'No box is waiting to be registered.', (rows) =>
            [
              table(
                [
                  'BOX SENDS',
                  'MAC (LABEL)',
                  'FIRST SEEN',
                  'LAST SEEN',
                  'TRIES',
                  'FIRMWARE',
                  'ADDRESS',
                  'WANTED BY',
                ],
                rows.map((p) => [
                  p.boxId,
                  p.label ?? '',
                  p.firstSeenAt,
                  p.lastSeenAt,
                  p.attempts,
                  p.firmwareVersion ?? '',
                  p.address,
                  p.wantedBy ?? '',
                ]),
              ),
              '',
              GAVE_UP_NOTE,
            ].join('\n'),
          ),
        );
      }),
    'hortus device pending',
    'hortus device pending --clear',
    'hortus device pending --clear 100aa286f24',
  );
  withExamples(
    device
      .command('claim')
      .description(
        'register a box (pending or not) into a group, by the id it sends or its label MAC; --move takes it from the group that holds it',
      )
      .argument('<id>', 'what the box sends (100aa286f24) or its label MAC (24:6F:28:AA:00:01)')
      .addOption(groupOption())
      .option('-t, --type <type>', 'device type', 'box')
      .addOption(
        new Option('--move', 'move it from the group that holds it (an administrator reclaiming an id)'),
      )
      .action(
        async (id: string, options: { group: string; type: string; move?: boolean }, command: Command) => {
          const claimed = await store(command, (useCase) =>
            useCase(ClaimDevice).execute({
              actor: consoleActor(),
              id,
              group: options.group,
              type: options.type,
              move: options.move === true,
            }),
          );
          outputFor(io, command).result(claimed, (d) => [showDevice(d), '', GAVE_UP_NOTE].join('\n'));
        },
      ),
    'hortus device claim 100aa286f24 --group greenhouse-1',
    'hortus device claim 24:6F:28:AA:00:01 --group greenhouse-2 --move',
  );
  for (const [name, locked, description] of [
    [
      'lock',
      true,
      'accept onboardings of a device only from the address it last onboarded from (its reboots); the key it holds keeps working',
    ],
    ['unlock', false, 'accept onboardings of a device from any address again'],
  ] as const) {
    withExamples(
      device
        .command(name)
        .description(description)
        .argument('<id>', 'the device in any id form')
        .action(async (id: string, _options: unknown, command: Command) => {
          const changed = await store(command, (useCase) =>
            useCase(SetDeviceLock).execute({ actor: consoleActor(), id, locked }),
          );
          outputFor(io, command).result(changed, showDevice);
        }),
      `hortus device ${name} 24:6F:28:AA:00:01`,
    );
  }
  withExamples(
    device
      .command('approve-move')
      .description(
        "let a locked device onboard once from the address of its refused onboarding (shown by 'device list'); it stays locked",
      )
      .argument('<id>', 'the device in any id form')
      .action(async (id: string, _options: unknown, command: Command) => {
        const approved = await store(command, (useCase) =>
          useCase(ApproveDeviceMove).execute({ actor: consoleActor(), id }),
        );
        outputFor(io, command).result(approved, showDevice);
      }),
    'hortus device approve-move 24:6F:28:AA:00:01',
  );
  withExamples(
    device
      .command('rotate-key')
      .description(
        'give a device a new key: the box learns it at its next boot, and the old key works until then; --revoke stops the old key at once',
      )
      .argument('<id>', 'the device in any id form')
      .addOption(new Option('--revoke', 'stop the old key now: the box is refused until it is power-cycled'))
      .action(async (id: string, options: { revoke?: boolean }, command: Command) => {
        const rotated = await store(command, (useCase) =>
          useCase(RotateDeviceKey).execute({ actor: consoleActor(), id, revoke: options.revoke === true }),
        );
        outputFor(io, command).result(rotated, showDevice);
      }),
    'hortus device rotate-key 24:6F:28:AA:00:01',
    'hortus device rotate-key 24:6F:28:AA:00:01 --revoke',
  );
}

/** What `device create` prints: the registration alone. */
function showRegistered(device: Device): string {
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
      // Checked in the action, after the id: a wrong MAC is the mistake a user needs to hear about first.
      .option('-t, --type <type>', 'device type, e.g. sensor-box (required)')
      .addOption(createGroupOption())
      .option('--any-id', 'register an id that is no MAC (as older devices of the original service had)')
      .action(
        async (
          deviceId: string,
          options: { group: string; type?: string; createGroup?: boolean; anyId?: boolean },
          command: Command,
        ) => {
          const problems: string[] = [];
          // A box is found by its MAC; an id in no MAC form would never match the box it was meant for.
          if (options.anyId !== true && macOfRegisteredId(deviceId.trim()) === undefined) {
            problems.push(
              `${deviceId} is not a MAC: give it as on the label (24:6F:28:AA:00:01, 24-6f-28-aa-00-01 or ` +
                '246f28aa0001) or as the box sends it (100aa286f24); --any-id registers it as it is',
            );
          }
          const { type } = options;
          if (type === undefined)
            problems.push('--type <type> is required: the device type, e.g. sensor-box');
          if (problems.length > 0 || type === undefined) throw new UsageError(problems.join('\n'));
          const created = await store(command, async (useCase) => {
            await requireGroup(useCase, options.group, options.createGroup === true);
            return useCase(CreateDevice).execute({
              actor: consoleActor(),
              deviceId,
              group: options.group,
              type,
            });
          });
          outputFor(io, command).result(created, showRegistered);
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
          useCase(DeleteDevice).execute({ actor: consoleActor(), group: options.group, deviceId }),
        );
        outputFor(io, command).result(deleted, (d) => say`Deleted device ${d.deviceId} of group ${d.group}.`);
      }),
    'hortus device delete 24:6F:28:AA:00:01 --group greenhouse-1',
  );
}
