import { FIRMWARE_TYPE } from '@hortus/core';
import { object, text } from './schemas.js';
import { json, type RouteInput, type RouterSpec } from './routing.js';

export const FIRMWARE_DOWNLOAD_PATH = '/api/hardware/download';

/** One header as text, the first of repeated ones. */
function header(input: RouteInput, name: string): string | undefined {
  const value = input.headers?.[name];
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
}

/**
 * Where the box reached this server, as plain HTTP: the updater of these boxes refuses https:// image
 * addresses, so the image is offered at the address the box polled the manifest from.
 */
function plainBase(input: RouteInput): string {
  return `http://${header(input, 'host') ?? input.hostname ?? 'localhost'}`;
}

/**
 * The firmware updater's two routes (esp32FOTA over plain HTTP). Boxes hold no access key for them, so
 * they are open: the manifest tells a version, and an image is fetched by its SHA-256, which only the
 * manifest names.
 */
export const firmwareRoutes: RouterSpec = {
  prefix: '/api/hardware',
  tag: 'Boxes',
  style: { body: 'message', serverError: 'Internal Server Error' },
  routes: [
    {
      method: 'get',
      path: '/update',
      access: 'open',
      writes: false,
      summary: "A box's firmware manifest",
      description:
        "Polled by HTTP boxes every 100 s. Answers the newest image published for the box's group or for " +
        'every box (the updater installs it only when it is newer than its own version), or 204 when there is ' +
        'none for it: boxes of firmware 1.0.4 (no OTA slot) and boxes whose version is unknown are offered ' +
        'only images published with --force. The box is the one `?id=` names (updater ' +
        'builds that send it: the MAC as a decimal number), else the registered box whose onboarding or data ' +
        'requests came from the same address (boxes of several groups behind one address get only images ' +
        'for every box).',
      unvalidatedQuery: object({ id: text('The box id, as updaters that identify themselves send it') }),
      responses: {
        200: {
          description: `\`{type: "${FIRMWARE_TYPE}", version, url}\`: url is plain HTTP`,
          schema: object({ type: { type: 'string' }, version: { type: 'string' }, url: { type: 'string' } }, [
            'type',
            'version',
            'url',
          ]),
        },
        204: { description: 'No image for this box: the updater keeps what it runs' },
        500: { description: "`{message: 'Internal Server Error'}`" },
      },
      handle: async (input, { offerFirmware }) => {
        const updaterId = input.query['id'];
        const offer = await offerFirmware.execute({
          address: input.clientAddress,
          ...(typeof updaterId === 'string' ? { updaterId } : {}),
        });
        // Never a manifest without an image: "nothing" is no manifest at all.
        if (offer === undefined) return { status: 204, empty: true };
        return json({
          type: offer.type,
          version: offer.version,
          url: `${plainBase(input)}${FIRMWARE_DOWNLOAD_PATH}/${offer.sha256}`,
        });
      },
    },
    {
      method: 'get',
      path: '/download/:sha256',
      access: 'open',
      writes: false,
      summary: 'A firmware image, by its SHA-256',
      params: object({ sha256: text('SHA-256 of the image, lower-case hex', 64) }, ['sha256']),
      responses: {
        200: {
          description: 'The image (application/octet-stream), with Content-Length and its SHA-256 as ETag',
        },
        404: { description: "`{message: 'No such firmware image'}`: never published, or withdrawn" },
        500: { description: "`{message: 'Internal Server Error'}`" },
      },
      handle: async ({ params }, { readFirmwareImage }) => {
        const image = await readFirmwareImage.execute({ sha256: params['sha256'] });
        return {
          status: 200,
          bytes: image.data,
          type: 'application/octet-stream',
          headers: {
            ETag: `"${image.sha256}"`,
            'Content-Disposition': `attachment; filename="firmware-${image.version}.bin"`,
          },
        };
      },
    },
  ],
};
