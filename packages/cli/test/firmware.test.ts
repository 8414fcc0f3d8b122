import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ListFirmware, MAX_FIRMWARE_BYTES } from '@hortus/core';
import { exitCodes } from '@hortus/cli';
import { type Container } from 'inversify';
import { mkdirSync } from 'node:fs';
import { hortus, scratchDataDir, type StoreContainer, storeContainer, testStore } from './harness.js';

function imageFile(bytes: number, seed = 1): { file: string; sha256: string } {
  const directory = scratchDataDir();
  mkdirSync(directory, { recursive: true });
  const file = join(directory, `firmware-${seed}.bin`);
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i += 1) data[i] = (i * 13 + seed) % 256;
  writeFileSync(file, data);
  return { file, sha256: createHash('sha256').update(data).digest('hex') };
}

describe(`hortus firmware (${testStore} store)`, () => {
  let container: Container;
  let store: StoreContainer;
  beforeEach(async () => {
    store = await storeContainer();
    container = store.container;
  });
  afterEach(async () => {
    await store.close();
  });

  it('when an image is published, listed and withdrawn, then each step says so and the store holds what it says', async () => {
    const { file, sha256 } = imageFile(200_000);

    const published = await hortus(container, ['firmware', 'publish', file, '--version', '1.0.5']);
    const forGroup = await hortus(container, [
      'firmware',
      'publish',
      file,
      '--version',
      '1.0.6',
      '-g',
      'north',
    ]);
    const listed = await hortus(container, ['firmware', 'list', '--json']);

    expect(published.code, published.stderr).to.equal(0);
    expect(published.stdout).to.contain(sha256).and.to.contain('1.0.5').and.to.contain('(every box)');
    expect(forGroup.code).to.equal(0);
    expect(listed.code).to.equal(0);
    const rows = JSON.parse(listed.stdout) as {
      version: string;
      group?: string;
      size: number;
      sha256: string;
    }[];
    expect(
      rows.map(({ version, group, size, sha256: digest }) => ({ version, group, size, digest })),
    ).to.deep.equal([
      { version: '1.0.5', group: undefined, size: 200_000, digest: sha256 },
      { version: '1.0.6', group: 'north', size: 200_000, digest: sha256 },
    ]);

    const withdrawn = await hortus(container, ['firmware', 'withdraw', '1.0.6', '--group', 'north']);
    const again = await hortus(container, ['firmware', 'withdraw', '1.0.6', '--group', 'north']);
    expect(withdrawn.code).to.equal(0);
    expect(withdrawn.stdout).to.contain('Withdrew firmware 1.0.6 for group north');
    expect(again.code).to.equal(exitCodes.notFound);
    expect(again.stderr).to.contain('No firmware 1.0.6 is published for group north');
    expect((await container.get(ListFirmware).execute()).map((image) => image.version)).to.deep.equal([
      '1.0.5',
    ]);
  });

  it('when the same version is published again for the same boxes, then it exits 4 and the first image stays', async () => {
    const first = imageFile(1000, 1);
    const second = imageFile(1000, 2);
    await hortus(container, ['firmware', 'publish', first.file, '--version', '1.0.5']);

    const repeated = await hortus(container, ['firmware', 'publish', second.file, '--version', '1.0.5']);

    expect(repeated.code).to.equal(exitCodes.conflict);
    const images = await container.get(ListFirmware).execute();
    expect(images.map((image) => image.sha256)).to.deep.equal([first.sha256]);
  });

  it('when the version is not semver, the image is over the bound, empty or missing, then it exits 2 and stores nothing', async () => {
    const small = imageFile(1000);
    const large = imageFile(MAX_FIRMWARE_BYTES + 1);
    const empty = imageFile(0);

    const outcomes = {
      notSemver: await hortus(container, ['firmware', 'publish', small.file, '--version', '1.0']),
      prefixed: await hortus(container, ['firmware', 'publish', small.file, '--version', 'v1.0.5']),
      tooLarge: await hortus(container, ['firmware', 'publish', large.file, '--version', '1.0.5']),
      empty: await hortus(container, ['firmware', 'publish', empty.file, '--version', '1.0.5']),
      missing: await hortus(container, ['firmware', 'publish', '/nonexistent.bin', '--version', '1.0.5']),
      noVersion: await hortus(container, ['firmware', 'publish', small.file]),
      withdrawNotSemver: await hortus(container, ['firmware', 'withdraw', 'latest']),
    };

    for (const [name, outcome] of Object.entries(outcomes)) {
      expect(outcome.code, `${name}: ${outcome.stderr}`).to.equal(exitCodes.usage);
    }
    expect(outcomes.notSemver.stderr).to.contain('must be a semantic version such as 1.0.5, got "1.0"');
    expect(outcomes.tooLarge.stderr).to.contain(`the largest image accepted is ${MAX_FIRMWARE_BYTES} bytes`);
    expect(outcomes.empty.stderr).to.contain('image is empty');
    expect(outcomes.missing.stderr).to.contain('/nonexistent.bin');
    expect(await container.get(ListFirmware).execute()).to.deep.equal([]);
  });

  it('when nothing is published, then list says every box is answered 204 (no update)', async () => {
    const listed = await hortus(container, ['firmware', 'list']);
    expect(listed.code).to.equal(0);
    expect(listed.stdout).to.contain('No firmware is published: every box is answered 204 (no update).');
  });

  it('when an image is published with --force, then it is recorded as forced and list shows it', async () => {
    const { file } = imageFile(1000);

    const forced = await hortus(container, ['firmware', 'publish', file, '--version', '1.0.7', '--force']);
    const plain = await hortus(container, ['firmware', 'publish', file, '--version', '1.0.8']);
    const listed = await hortus(container, ['firmware', 'list']);

    expect(forced.code, forced.stderr).to.equal(0);
    expect(forced.stdout).to.match(/Forced: +yes/u);
    expect(plain.stdout).to.match(/Forced: +no/u);
    expect(listed.stdout).to.match(/1\.0\.7 .* yes\n/u);
    expect(
      (await container.get(ListFirmware).execute()).map(({ version, forced: f }) => [version, f === true]),
    ).to.deep.equal([
      ['1.0.7', true],
      ['1.0.8', false],
    ]);
  });
});
