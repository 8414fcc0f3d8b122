import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { type Repositories } from '@hortus/core';

chai.use(chaiAsPromised);
export const { expect } = chai;

export { type Repositories };

/**
 * Opens a fresh, empty store for one test. A suite needs only the repositories it names, so a full store
 * fits every suite; `dispose` runs after each test (drop the database, close the client, ...).
 */
export type StoreFactory<K extends keyof Repositories = keyof Repositories> = () => Promise<OpenStore<K>>;

export type OpenStore<K extends keyof Repositories> = Pick<Repositories, K> & {
  readonly dispose?: () => Promise<void>;
};

/** Opens a fresh store before each test of the enclosing describe and disposes it afterwards. */
export function freshStorePerTest<K extends keyof Repositories>(
  createStore: StoreFactory<K>,
): () => Pick<Repositories, K> {
  let store: OpenStore<K> | undefined;
  beforeEach(async () => {
    store = await createStore();
  });
  afterEach(async () => {
    const opened = store;
    store = undefined;
    await opened?.dispose?.();
  });
  return () => {
    if (store === undefined) throw new Error('The store is only open while a test runs');
    return store;
  };
}

/** Entities cross the port as plain data: no driver documents, classes or leaked `_id`s. */
export function expectPlainEntity(entity: object): void {
  expect(Object.getPrototypeOf(entity)).to.equal(Object.prototype);
  expect(entity).not.to.have.property('_id');
  expect(entity).to.have.property('id').that.is.a('string').with.length.greaterThan(0);
}

/** A date at a fixed offset in milliseconds from a fixed, whole-millisecond base. */
export function at(offsetMs: number): Date {
  return new Date(Date.UTC(2024, 4, 1, 12, 0, 0) + offsetMs);
}

export const MINUTE = 60_000;
