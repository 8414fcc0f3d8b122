import sinon from 'sinon';
import { type CommitFeed, GetRecentCommits, UpstreamError } from '@hortus/core';
import { createTestApp, expect, type TestApp } from './support.js';

const TTL = 60_000;

describe('GetRecentCommits', () => {
  let feed: sinon.SinonStub<[], Promise<unknown>>;
  let app: TestApp;

  beforeEach(() => {
    feed = sinon.stub<[], Promise<unknown>>();
    const commitFeed: CommitFeed = { recentCommits: feed };
    app = createTestApp({ settings: { commitsCacheMs: TTL }, commitFeed });
  });

  it('when asked again within the cache time, then the cached list is answered without asking the host', async () => {
    feed.resolves([{ sha: 'a' }]);
    const commits = app.get(GetRecentCommits);

    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    app.clock.advance(TTL - 1);
    feed.resolves([{ sha: 'b' }]);

    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    expect(feed.callCount).to.equal(1);
  });

  it('when the cache time has passed, then the stale copy is answered at once while the host is asked, and its new list answered next', async () => {
    feed.resolves([{ sha: 'a' }]);
    const commits = app.get(GetRecentCommits);
    await commits.execute();
    app.clock.advance(TTL);
    let answer: (body: unknown) => void = () => {};
    feed.returns(new Promise((resolve) => (answer = resolve)));

    // The host has not answered yet: the caller does not wait for it.
    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    expect(feed.callCount).to.equal(2);
    answer([{ sha: 'b' }]);
    await new Promise((resolve) => setImmediate(resolve));

    expect(await commits.execute()).to.deep.equal([{ sha: 'b' }]);
    expect(feed.callCount).to.equal(2);
  });

  it('when the host never answers a refresh, then every caller still gets the stale copy at once', async () => {
    feed.resolves([{ sha: 'a' }]);
    const commits = app.get(GetRecentCommits);
    await commits.execute();
    app.clock.advance(TTL * 2);
    feed.returns(new Promise(() => undefined));

    const answers = await Promise.all(Array.from({ length: 5 }, () => commits.execute()));
    expect(answers).to.deep.equal(Array.from({ length: 5 }, () => [{ sha: 'a' }]));
    expect(feed.callCount).to.equal(2);
  });

  it('when many callers ask at once, then the host is asked once and every caller gets its answer', async () => {
    let answer: (body: unknown) => void = () => {};
    feed.returns(new Promise((resolve) => (answer = resolve)));
    const commits = app.get(GetRecentCommits);

    const pending = Array.from({ length: 5 }, () => commits.execute());
    answer([{ sha: 'a' }]);

    expect(await Promise.all(pending)).to.deep.equal(Array.from({ length: 5 }, () => [{ sha: 'a' }]));
    expect(feed.callCount).to.equal(1);
  });

  it('when the host fails after a good answer, then the stale copy is served', async () => {
    feed.resolves([{ sha: 'a' }]);
    const commits = app.get(GetRecentCommits);
    await commits.execute();
    app.clock.advance(TTL * 10);
    feed.rejects(new Error('rate limited'));

    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    expect(feed.callCount).to.equal(3);
  });

  it('when the host fails and nothing is cached, then it is an upstream error, and the next call asks again', async () => {
    const cause = new Error('timeout');
    feed.rejects(cause);
    const commits = app.get(GetRecentCommits);

    await expect(commits.execute())
      .to.be.rejectedWith(UpstreamError)
      .and.eventually.have.property('cause', cause);

    feed.resolves([{ sha: 'a' }]);
    expect(await commits.execute()).to.deep.equal([{ sha: 'a' }]);
    expect(feed.callCount).to.equal(2);
  });
});
