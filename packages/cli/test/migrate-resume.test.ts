import { EventEmitter } from 'node:events';
import { expect } from 'chai';
import { type MigrationReport } from '@hortus/cli';
import { type Db, ObjectId } from 'mongodb';
import { Capture, hortus } from './harness.js';
import { collectionOf, counts, eachMigrationPair, type Target, when, withMongo } from './migrate-fixture.js';

describe('hortus migrate: moving over from the original service', function () {
  this.timeout(60_000);
  let source: Db;
  let sourceUri: string;
  let target: Target;

  eachMigrationPair((pair) => ({ source, sourceUri, target } = pair));

  withMongo(
    when(
      'when a run is interrupted, then it stops after the batch in flight, and the next run resumes after its checkpoint',
    ),
    async () => {
      const readings = Array.from({ length: 95 }, (_, i) => ({
        _id: new ObjectId(),
        time: new Date(Date.UTC(2024, 4, 1, 0, i)),
        topic: 'esp/air/humidity',
        value: String(50 + (i % 10)),
        group: 'gh-1',
      }));
      await source.collection('datas').insertMany(readings);
      await source
        .collection('groups')
        .insertOne({ name: 'gh-1', package: 'small', employee: [], settings: [] });
      const signals = new EventEmitter();
      // Ctrl-C as soon as the readings start: the first batch of 10 finishes, then the run stops.
      const stderr = new (class extends Capture {
        override write(chunk: string): boolean {
          if (chunk.includes('"collection":"datas"')) signals.emit('SIGINT');
          return super.write(chunk);
        }
      })();

      const first = await hortus(
        target.container,
        ['migrate', '--from', sourceUri, '--batch-size', '10', '--json'],
        {
          signals,
          stderr,
        },
      );

      expect(first.code).to.equal(5);
      expect(first.stderr).to.include('run the command again to resume');
      const interrupted = JSON.parse(first.stdout) as MigrationReport;
      expect(interrupted).to.include({ complete: false, interrupted: true });
      expect(counts(collectionOf(interrupted, 'datas'))).to.include({ read: 10, written: 10 });
      expect(await target.store.db.collection('readings').countDocuments()).to.equal(10);
      expect(signals.listenerCount('SIGINT')).to.equal(0);

      const second = await hortus(target.container, [
        'migrate',
        '--from',
        sourceUri,
        '--batch-size',
        '10',
        '--json',
      ]);

      expect(second.code, second.stderr).to.equal(0);
      const resumed = collectionOf(JSON.parse(second.stdout) as MigrationReport, 'datas');
      expect(resumed.resumedAfter).to.equal(readings[9]?._id.toHexString());
      expect(counts(resumed)).to.include({ read: 85, written: 85, alreadyThere: 0 });
      expect(await target.store.db.collection('readings').countDocuments()).to.equal(95);

      // Finished: the checkpoint is cleared, so a third run reads everything and finds it stored.
      const third = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);
      expect(counts(collectionOf(JSON.parse(third.stdout) as MigrationReport, 'datas'))).to.include({
        read: 95,
        written: 0,
        alreadyThere: 95,
      });
    },
  );

  withMongo(
    when('when the source changed after an interruption, then the collection is read again from its start'),
    async () => {
      const readings = Array.from({ length: 30 }, (_, i) => ({
        _id: new ObjectId(),
        time: new Date(Date.UTC(2024, 4, 1, 0, i)),
        topic: 'esp/air/humidity',
        value: String(i),
        group: 'gh-1',
      }));
      await source.collection('datas').insertMany(readings);
      const signals = new EventEmitter();
      const stderr = new (class extends Capture {
        override write(chunk: string): boolean {
          if (chunk.includes('"collection":"datas"')) signals.emit('SIGINT');
          return super.write(chunk);
        }
      })();
      const first = await hortus(target.container, ['migrate', '--from', sourceUri, '--batch-size', '10'], {
        signals,
        stderr,
      });
      expect(first.code).to.equal(5);
      // Someone edits the old database before the second run: the checkpoint no longer fits.
      await source.collection('datas').deleteOne({ _id: readings[0]?._id ?? new ObjectId() });

      const second = await hortus(target.container, ['migrate', '--from', sourceUri, '--json']);

      const datas = collectionOf(JSON.parse(second.stdout) as MigrationReport, 'datas');
      expect(datas.resumedAfter).to.equal(undefined);
      // The deleted reading was in the first batch: 9 of that batch are found, the other 20 are new.
      expect(counts(datas)).to.include({ read: 29, written: 20, alreadyThere: 9 });
      expect(datas.notes[0]?.text).to.equal(
        'the source changed since the interrupted run: this collection was read from its start again',
      );
    },
  );
});
