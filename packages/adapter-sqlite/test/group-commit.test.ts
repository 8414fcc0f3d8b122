import 'reflect-metadata';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import * as chai from 'chai';
import chaiAsPromised from 'chai-as-promised';
import { GroupCommit, SqliteConnection } from '@hortus/adapter-sqlite';
import { openTestStore, tempDir } from './fixture.js';

chai.use(chaiAsPromised);
const { expect } = chai;

describe('SQLite group commit', () => {
  let dir: string;
  let connection: SqliteConnection;
  beforeEach(() => {
    dir = tempDir();
    const database = new Database(join(dir, 'commit.db'));
    database.pragma('journal_mode = WAL');
    database.exec('CREATE TABLE items (n INTEGER PRIMARY KEY)');
    connection = new SqliteConnection();
    connection.attach(database);
  });
  afterEach(() => {
    connection.detach()?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const insert = (n: number) => (commit: number) => {
    connection.prepare('INSERT INTO items (n) VALUES (?)').run(n);
    return { n, commit };
  };
  const stored = (): number[] =>
    (connection.prepare('SELECT n FROM items ORDER BY n').all() as { n: number }[]).map((row) => row.n);

  it('when writes arrive together, then they share one commit, and each is answered only once it is committed', async () => {
    const commits = new GroupCommit(connection);
    const seenBeforeAnswer: number[][] = [];
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        commits.run(insert(n)).then((answer) => {
          // Read on another connection: only committed rows are visible there.
          const other = new Database(join(dir, 'commit.db'), { readonly: true });
          seenBeforeAnswer.push(
            (other.prepare('SELECT n FROM items').all() as { n: number }[]).map((r) => r.n),
          );
          other.close();
          return answer;
        }),
      ),
    );

    expect(new Set(answers.map((answer) => answer.commit)).size).to.equal(1);
    expect(answers.map((answer) => answer.n)).to.deep.equal([1, 2, 3, 4, 5]);
    for (const seen of seenBeforeAnswer) expect(seen).to.have.members([1, 2, 3, 4, 5]);
  });

  it('when one write of a group fails, then only it is rolled back and only its caller gets the error', async () => {
    const commits = new GroupCommit(connection);
    const outcomes = await Promise.allSettled([
      commits.run(insert(1)),
      commits.run((commit) => {
        insert(2)(commit);
        insert(1)(commit); // a duplicate key: this write fails after writing 2
        return undefined;
      }),
      commits.run(insert(3)),
    ]);

    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).to.match(/UNIQUE|PRIMARY KEY/u);
    expect(stored()).to.deep.equal([1, 3]);
  });

  it('when writes come one after the other, then each gets a commit of its own', async () => {
    const commits = new GroupCommit(connection);
    const first = await commits.run(insert(1));
    const second = await commits.run(insert(2));
    expect(second.commit).to.be.greaterThan(first.commit);
    expect(stored()).to.deep.equal([1, 2]);
  });

  it('when a hundred single readings are added at once through the repository, then all are stored and each add counts its own', async () => {
    const opened = await openTestStore();
    try {
      const readings = opened.store.repositories().readings;
      const counts = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          readings.add([
            {
              group: `g${i % 7}`,
              topic: `esp/t${i % 3}`,
              value: i,
              time: new Date(Date.UTC(2025, 0, 1, 0, 0, i)),
            },
          ]),
        ),
      );
      const again = await readings.add([
        { group: 'g0', topic: 'esp/t0', value: 0, time: new Date(Date.UTC(2025, 0, 1, 0, 0, 0)) },
      ]);
      expect(counts.every((count) => count === 1)).to.equal(true);
      expect(again).to.equal(0);
      const rows = opened.store.database.prepare('SELECT count(*) AS n FROM readings').get() as { n: number };
      const series = opened.store.database.prepare('SELECT count(*) AS n FROM series').get() as { n: number };
      expect(rows.n).to.equal(100);
      expect(series.n).to.equal(21);
    } finally {
      await opened.dispose();
    }
  });
});
