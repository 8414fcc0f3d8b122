import { createHash } from 'node:crypto';
import { type FirmwareRepository, type StoredFirmwareImage } from '@hortus/core';
import { at, expect, freshStorePerTest, type StoreFactory } from './store.js';

/** An image of `size` bytes whose content depends on `seed`, with its true digest. */
function image(version: string, seed: number, group?: string, size = 4096): StoredFirmwareImage {
  const data = new Uint8Array(size);
  for (let i = 0; i < size; i += 1) data[i] = (i * 31 + seed * 7) % 256;
  return {
    version,
    ...(group === undefined ? {} : { group }),
    size,
    sha256: createHash('sha256').update(data).digest('hex'),
    publishedAt: at(seed * 1000),
    data,
  };
}

export function firmwareRepositoryContract(name: string, createStore: StoreFactory<'firmware'>): void {
  describe(`${name}: FirmwareRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): FirmwareRepository => store().firmware;

    it('when an image is added, then it is listed without its bytes and read back byte for byte by its digest', async () => {
      const published = image('1.0.5', 1, undefined, 300_000);
      await repository().add(published);

      const listed = await repository().list();
      const read = await repository().read(published.sha256);

      const { data, ...withoutBytes } = published;
      expect(listed).to.deep.equal([withoutBytes]);
      expect(Object.getPrototypeOf(listed[0])).to.equal(Object.prototype);
      expect(read).not.to.equal(undefined);
      expect(read?.version).to.equal('1.0.5');
      expect(read?.group).to.equal(undefined);
      expect(read?.publishedAt).to.deep.equal(published.publishedAt);
      expect(Buffer.from(read?.data ?? new Uint8Array()).equals(Buffer.from(data))).to.equal(true);
      expect(await repository().read('0'.repeat(64))).to.equal(undefined);
    });

    it('when an image is added as forced, then list and read say so, and an image not forced says nothing', async () => {
      const forced = { ...image('1.0.6', 2, 'north'), forced: true };
      const plain = image('1.0.7', 3, 'north');
      await repository().add(forced);
      await repository().add(plain);

      const listed = await repository().list();

      expect(listed.map((entry) => [entry.version, entry.forced])).to.deep.equal([
        ['1.0.6', true],
        ['1.0.7', undefined],
      ]);
      expect(listed[1]).not.to.have.property('forced');
      expect((await repository().read(forced.sha256))?.forced).to.equal(true);
    });

    it('when the same version is added for the same boxes twice, then the second is a conflict and the first stays', async () => {
      await repository().add(image('1.0.5', 1));
      await repository().add(image('1.0.5', 2, 'north'));

      await expect(repository().add(image('1.0.5', 3))).to.be.rejected.and.eventually.have.property(
        'code',
        'CONFLICT',
      );
      await expect(repository().add(image('1.0.5', 4, 'north'))).to.be.rejected.and.eventually.have.property(
        'code',
        'CONFLICT',
      );
      const listed = await repository().list();
      expect(listed.map(({ version, group, sha256 }) => ({ version, group, sha256 }))).to.deep.equal([
        { version: '1.0.5', group: undefined, sha256: image('1.0.5', 1).sha256 },
        { version: '1.0.5', group: 'north', sha256: image('1.0.5', 2).sha256 },
      ]);
    });

    it('when several versions are published, then they are listed in version order, not text order', async () => {
      for (const [index, version] of ['1.10.0', '1.2.0', '1.2.0-beta.2', '0.9.1'].entries()) {
        await repository().add(image(version, index + 1));
      }

      expect((await repository().list()).map((entry) => entry.version)).to.deep.equal([
        '0.9.1',
        '1.2.0-beta.2',
        '1.2.0',
        '1.10.0',
      ]);
    });

    it('when an image is withdrawn, then only that version for those boxes goes, and its bytes cannot be read any more', async () => {
      const everyBox = image('1.0.5', 1);
      const north = image('1.0.5', 2, 'north');
      await repository().add(everyBox);
      await repository().add(north);

      expect(await repository().remove('1.0.5', undefined)).to.equal(true);
      expect(await repository().remove('1.0.5', undefined)).to.equal(false);
      expect(await repository().remove('1.0.6', 'north')).to.equal(false);

      expect((await repository().list()).map((entry) => entry.group)).to.deep.equal(['north']);
      expect(await repository().read(everyBox.sha256)).to.equal(undefined);
      expect((await repository().read(north.sha256))?.group).to.equal('north');
    });
  });
}
