import 'reflect-metadata';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { InvalidInputError, requirePassword } from '@hortus/core';
import { BcryptPasswordHasher, RankedCommonPasswords } from '@hortus/identity';
import bcrypt from 'bcryptjs';

chai.use(chaiAsPromised);
const { expect } = chai;

const common = new RankedCommonPasswords();
const check = (password: unknown): string => requirePassword(password, 'password', 'new', common);
const refusal = (password: unknown): string => {
  try {
    check(password);
  } catch (error) {
    expect(error).to.be.instanceOf(InvalidInputError);
    return (error as Error).message;
  }
  throw new Error(`${String(password)} was accepted`);
};

describe('the password policy (NIST SP 800-63B)', () => {
  it('when a password has 8 to 128 characters and is not common, then it is accepted, whatever it is made of', () => {
    for (const password of [
      'correct horse battery staple',
      'zqxjkvbwplmt',
      'Ünïcödé paß 𝄞 déjà',
      'x9'.repeat(64),
      '        spaces count',
    ]) {
      expect(check(password)).to.equal(password);
    }
  });

  it('when a rule fails, then the message says which one', () => {
    expect(refusal('')).to.equal('password is required');
    expect(refusal(12345678)).to.equal('password is required');
    expect(refusal('seven77')).to.equal('password must be at least 8 characters');
    expect(refusal('y'.repeat(129))).to.equal('password must be at most 128 characters');
    for (const password of ['password1', 'PASSWORD1', 'iloveyou', 'qwertyuiop', '12345678', 'baseball']) {
      expect(refusal(password), password).to.equal(
        'password is one of the most common passwords: choose another',
      );
    }
  });

  it('when the list is loaded, then it holds a few thousand passwords, each long enough to pass the length rule', () => {
    expect(common.size).to.be.within(3000, 10_000);
    const tiny = new RankedCommonPasswords(['abc', 'Sunshine99', 'rare-but-listed'], 2);
    expect(tiny.includes('sunshine99')).to.equal(true);
    expect(tiny.includes('rare-but-listed')).to.equal(false);
    expect(tiny.size).to.equal(1);
  });

  it('when a log-in checks a current password, then only the bounds apply: the original users keep theirs', () => {
    expect(requirePassword('abc', 'password', 'current', common)).to.equal('abc');
    expect(requirePassword('password1', 'password', 'current', common)).to.equal('password1');
  });
});

describe('bcrypt with passwords up to 128 characters', () => {
  const hasher = new BcryptPasswordHasher({ cost: 4, threads: 1 });
  after(() => hasher.close());

  it('when a passphrase is longer than 72 bytes, then every character counts: one differing after byte 72 does not verify', async () => {
    const long = `${'a long passphrase '.repeat(6)}ending one`;
    const other = `${'a long passphrase '.repeat(6)}ending two`;
    expect(Buffer.byteLength(long)).to.be.greaterThan(72);
    const hash = await hasher.hash(long);
    expect(await hasher.verify(long, hash)).to.equal(true);
    expect(await hasher.verify(other, hash)).to.equal(false);
  });

  it('when a hash was made the original way (bcrypt of the password itself), then it still verifies', async () => {
    const original = bcrypt.hashSync('Tomato#Bed42', 10);
    expect(await hasher.verify('Tomato#Bed42', original)).to.equal(true);
    expect(await hasher.verify('Tomato#Bed43', original)).to.equal(false);
  });
});
