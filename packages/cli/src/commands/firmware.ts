import { readFile, stat } from 'node:fs/promises';
import {
  type FirmwareImage,
  InvalidInputError,
  ListFirmware,
  MAX_FIRMWARE_BYTES,
  PublishFirmware,
  requireSemver,
  WithdrawFirmware,
} from '@hortus/core';
import { type Command, Option } from 'commander';
import { UsageError } from '../exit-codes.js';
import { type RunIo } from '../io.js';
import { fields, localTime, say, table } from '../output.js';
import { consoleActor, listOrNote, outputFor, storeFor, withExamples } from './shared.js';

const forGroup = (): Option =>
  new Option('-g, --group <name>', 'only boxes of this group (default: every box)');

function showImage(image: FirmwareImage): string {
  return fields([
    ['Version', image.version],
    ['Group', image.group ?? '(every box)'],
    ['Size', `${image.size} bytes`],
    ['SHA-256', image.sha256],
    ['Published', localTime(image.publishedAt)],
    [
      'Forced',
      image.forced === true ? 'yes (offered also to 1.0.4 boxes and boxes of unknown version)' : 'no',
    ],
  ]);
}

/**
 * The image file, refused before it is read when it is larger than the store takes (a wrong file, such as
 * a whole flash dump, should not be read into memory first).
 */
async function readImage(file: string): Promise<Uint8Array> {
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new UsageError(`${file} is not a file`);
    size = info.size;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (size > MAX_FIRMWARE_BYTES) {
    throw InvalidInputError.forField(
      'image',
      `${file} is ${size} bytes; the largest image accepted is ${MAX_FIRMWARE_BYTES} bytes`,
    );
  }
  return new Uint8Array(await readFile(file));
}

export function registerFirmwareCommands(program: Command, io: RunIo): void {
  const store = storeFor(io);
  const firmware = withExamples(
    program
      .command('firmware')
      .description(
        "firmware images for the HTTP boxes' updater (GET /api/hardware/update); untested on hardware, " +
          'and boxes with firmware 1.0.4 cannot install any (see docs/boxes.md)',
      ),
    'hortus firmware list',
  );
  withExamples(
    firmware
      .command('publish')
      .description(
        `offer an image (--version <semver>, required) to every box or one group's boxes (a box installs it ` +
          `when it is newer than its own); at most ${MAX_FIRMWARE_BYTES} bytes. Boxes of firmware 1.0.4 ` +
          '(no OTA slot) and boxes of unknown version are offered it only with --force',
      )
      .argument('<file>', 'the application image (.bin) as the build wrote it')
      .addOption(forGroup())
      .addOption(
        new Option(
          '--force',
          'offer it also to boxes that report firmware 1.0.4 or no version (they download it every 100 s)',
        ),
      )
      .action(async (file: string, options: { group?: string; force?: boolean }, command: Command) => {
        // The program's --version [semver] (see run.ts) carries the image's version here.
        const given = command.optsWithGlobals<{ version?: string | boolean }>().version;
        if (typeof given !== 'string') {
          throw new UsageError("--version <semver> is required: the image's version, e.g. 1.0.5");
        }
        // Checked before the file is read: a typo in the version should not cost reading megabytes.
        const version = requireSemver(given);
        const data = await readImage(file);
        const published = await store(command, (useCase) =>
          useCase(PublishFirmware).execute({
            actor: consoleActor(),
            data,
            version,
            ...(options.group === undefined ? {} : { group: options.group }),
            ...(options.force === true ? { force: true } : {}),
          }),
        );
        outputFor(io, command).result(published, showImage);
      }),
    'hortus firmware publish build/firmware.bin --version 1.0.5',
    'hortus firmware publish build/firmware.bin --version 1.0.6-rc.1 --group greenhouse-1',
  );
  withExamples(
    firmware
      .command('list')
      .description('list the published images')
      .action(async (_options: unknown, command: Command) => {
        const images = await store(command, (useCase) => useCase(ListFirmware).execute());
        outputFor(io, command).result(images, (all) =>
          listOrNote(all, 'No firmware is published: every box is answered 204 (no update).', (rows) =>
            table(
              ['VERSION', 'GROUP', 'SIZE', 'SHA-256', 'PUBLISHED', 'FORCED'],
              rows.map((image) => [
                image.version,
                image.group ?? '(every box)',
                image.size,
                image.sha256,
                localTime(image.publishedAt),
                image.forced === true ? 'yes' : '',
              ]),
            ),
          ),
        );
      }),
    'hortus firmware list --json',
  );
  withExamples(
    firmware
      .command('withdraw')
      .description('stop offering an image; boxes that installed it keep it')
      .argument('<version>', 'the version to withdraw')
      .addOption(forGroup())
      .action(async (version: string, options: { group?: string }, command: Command) => {
        await store(command, (useCase) =>
          useCase(WithdrawFirmware).execute({
            actor: consoleActor(),
            version,
            ...(options.group === undefined ? {} : { group: options.group }),
          }),
        );
        const boxes = options.group === undefined ? 'every box' : `group ${options.group}`;
        outputFor(io, command).result(
          { version, group: options.group ?? null },
          () => say`Withdrew firmware ${version} for ${boxes}.`,
        );
      }),
    'hortus firmware withdraw 1.0.5',
  );
}
