import * as core from '@hortus/core';
import { copiedRepositories, type Repositories, repositoryTokens } from '@hortus/core';
import { expect } from './support.js';

/**
 * The repositories `hortus store copy` deliberately leaves alone, each with the reason. A port added to
 * core's `repositoryTokens` must either be copied (`copiedRepositories` in core/src/store-copy) or be
 * named here: the inventory below fails otherwise, so a new port cannot be forgotten by the copy.
 */
const notCopied: Readonly<Partial<Record<keyof Repositories, string>>> = {
  // Holds nothing of its own: it reads the revision counters the other repositories bump, and the
  // target's counters move as the copy writes there. A cursor from the source means nothing on the
  // target (the engine starts from a reset on a new store anyway).
  changeFeed: 'derived from the revision counters of the copied repositories',
  // The trail says what happened on the store it was written to; a copy starts its own (docs/security.md).
  auditLog: "the source's trail of changes stays with the source",
};

/**
 * Tokens a store binds besides its repositories that the copy leaves alone. Only stores' state belongs
 * here, not services (clock, mailer).
 */
const storeBoundNotCopied: Readonly<Record<string, string>> = {
  // Log-in and sign-up attempt counts (rate limits): short-lived windows of minutes, worthless after a
  // move, and a store shared by several servers keeps them in the store only for that.
  ATTEMPT_COUNTER: 'rate-limit windows of minutes',
};

describe('store copy inventory: every repository of core is copied or deliberately left out', () => {
  it('when core has a repository port, then store copy copies it or the inventory names why not', () => {
    const ports = Object.keys(repositoryTokens).sort();
    const covered = new Set<string>([...copiedRepositories, ...Object.keys(notCopied)]);

    const forgotten = ports.filter((name) => !covered.has(name));

    expect(
      forgotten,
      'add these to copiedRepositories (and copy them) or to notCopied, saying why',
    ).to.deep.equal([]);
  });

  it('when a port is left out, then it is not also copied, and every name left out is a port of core', () => {
    const ports = new Set(Object.keys(repositoryTokens));

    for (const name of Object.keys(notCopied)) {
      expect(ports.has(name), `${name} is no repository of core`).to.equal(true);
      expect(copiedRepositories as readonly string[]).not.to.include(name);
    }
  });

  it('when core exports a repository token, then it is one of repositoryTokens, the list every store and the copy follow', () => {
    const listed = new Set<symbol>(Object.values(repositoryTokens));
    const exported = Object.entries(core).filter(
      ([name, value]) => typeof value === 'symbol' && /_REPOSITORY$/u.test(name),
    );

    expect(exported.length).to.be.greaterThan(0);
    for (const [name, token] of exported) {
      expect(listed.has(token as symbol), `${name} is missing from repositoryTokens`).to.equal(true);
    }
  });

  it('when a store-bound token is left out on purpose, then core still exports it', () => {
    for (const name of Object.keys(storeBoundNotCopied)) {
      expect(typeof (core as Record<string, unknown>)[name], name).to.equal('symbol');
    }
  });
});
