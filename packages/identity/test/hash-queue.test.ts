import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { ThrottledError } from '@hortus/core';
import { HashQueue, type HashPriority } from '@hortus/identity';

chai.use(chaiAsPromised);
const { expect } = chai;

/** A fake hash: it starts when the queue calls it and ends when the test says so. */
class FakeHashes {
  readonly started: string[] = [];
  private readonly finish = new Map<string, (outcome: Error | undefined) => void>();
  running = 0;
  mostAtOnce = 0;

  job(name: string): () => Promise<string> {
    return () =>
      new Promise<string>((resolve, reject) => {
        this.started.push(name);
        this.running += 1;
        this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
        this.finish.set(name, (error) => {
          this.running -= 1;
          if (error === undefined) resolve(name);
          else reject(error);
        });
      });
  }

  /** Ends a started job, then lets the queue start the next one. */
  async end(name: string, error?: Error): Promise<void> {
    this.finish.get(name)?.(error);
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
  }
}

function queue(concurrency: number, urgent = 16, deferrable = 16): HashQueue {
  return new HashQueue({ concurrency, maxWaiting: { urgent, deferrable } });
}

describe('HashQueue (the bounded line in front of the bcrypt threads)', () => {
  it('when sign-ups fill the threads and a log-in arrives, then the log-in runs next, before sign-ups that waited longer', async () => {
    const hashes = new FakeHashes();
    const line = queue(1);
    const submit = (priority: HashPriority, name: string) => line.run(priority, hashes.job(name));

    const done = [
      submit('deferrable', 'sign-up 1'),
      submit('deferrable', 'sign-up 2'),
      submit('deferrable', 'sign-up 3'),
      submit('urgent', 'log-in'),
    ];
    expect(hashes.started).to.deep.equal(['sign-up 1']);
    await hashes.end('sign-up 1');
    expect(hashes.started).to.deep.equal(['sign-up 1', 'log-in']);
    await hashes.end('log-in');
    await hashes.end('sign-up 2');
    await hashes.end('sign-up 3');

    expect(await Promise.all(done)).to.deep.equal(['sign-up 1', 'sign-up 2', 'sign-up 3', 'log-in']);
    expect(hashes.started).to.deep.equal(['sign-up 1', 'log-in', 'sign-up 2', 'sign-up 3']);
  });

  it('when more jobs come than threads, then no more than the threads run at once', async () => {
    const hashes = new FakeHashes();
    const line = queue(2);
    const names = ['a', 'b', 'c', 'd', 'e'];

    const done = names.map((name) => line.run('urgent', hashes.job(name)));
    expect(hashes.started).to.deep.equal(['a', 'b']);
    for (const name of names) await hashes.end(name);

    expect(await Promise.all(done)).to.deep.equal(names);
    expect(hashes.mostAtOnce).to.equal(2);
  });

  it('when the sign-up line is full, then another sign-up is refused at once (429), and log-ins still queue', async () => {
    const hashes = new FakeHashes();
    const line = queue(1, 2, 2);
    const running = line.run('deferrable', hashes.job('running'));
    const waiting = [line.run('deferrable', hashes.job('w1')), line.run('deferrable', hashes.job('w2'))];

    const refused = line.run('deferrable', hashes.job('refused'));
    const logIn = line.run('urgent', hashes.job('log-in'));

    const error = await refused.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).to.be.an.instanceOf(ThrottledError);
    expect((error as ThrottledError).retryAfterSeconds).to.be.above(0);
    expect(line.waiting('deferrable')).to.equal(2);
    expect(line.waiting('urgent')).to.equal(1);
    for (const name of ['running', 'log-in', 'w1', 'w2']) await hashes.end(name);
    expect(await Promise.all([running, logIn, ...waiting])).to.deep.equal(['running', 'log-in', 'w1', 'w2']);
    expect(hashes.started).to.not.include('refused');
  });

  it('when a job fails, then its caller gets the error and the slot goes to the next job', async () => {
    const hashes = new FakeHashes();
    const line = queue(1);
    const failing = line.run('urgent', hashes.job('failing'));
    const next = line.run('urgent', hashes.job('next'));

    await hashes.end('failing', new Error('thread crashed'));
    await hashes.end('next');

    await expect(failing).to.be.rejectedWith('thread crashed');
    expect(await next).to.equal('next');
  });
});
