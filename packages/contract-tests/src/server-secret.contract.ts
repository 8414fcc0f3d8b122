import { type ServerSecretRepository } from '@hortus/core';
import { expect, freshStorePerTest, type StoreFactory } from './store.js';

export function serverSecretRepositoryContract(
  name: string,
  createStore: StoreFactory<'serverSecrets'>,
): void {
  describe(`${name}: ServerSecretRepository contract`, () => {
    const store = freshStorePerTest(createStore);
    const repository = (): ServerSecretRepository => store().serverSecrets;

    it('when no secret has the name, then the candidate is stored and answered', async () => {
      expect(await repository().findOrCreate('token-key', 'first')).to.equal('first');
    });

    it('when a secret has the name, then it is answered and the candidate is ignored', async () => {
      await repository().findOrCreate('token-key', 'first');

      expect(await repository().findOrCreate('token-key', 'second')).to.equal('first');
      expect(await repository().findOrCreate('other-key', 'third')).to.equal('third');
    });

    it('when several calls race for one name, then all answer the one value that was stored', async () => {
      const answers = await Promise.all(
        ['a', 'b', 'c', 'd', 'e'].map((candidate) => repository().findOrCreate('token-key', candidate)),
      );

      expect(new Set(answers).size).to.equal(1);
      expect(await repository().findOrCreate('token-key', 'later')).to.equal(answers[0]);
    });
  });
}
