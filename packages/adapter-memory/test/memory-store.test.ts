import { Container } from 'inversify';
import { expect } from 'chai';
import {
  ACCESS_KEY_REPOSITORY,
  ACTION_REPOSITORY,
  DEVICE_REPOSITORY,
  GROUP_REPOSITORY,
  HISTORY_CHART_REPOSITORY,
  NOTIFICATION_REPOSITORY,
  type NewReading,
  READING_REPOSITORY,
  type ReadingRepository,
  USER_REPOSITORY,
} from '@hortus/core';
import { InMemoryReadingRepository, InMemoryUserRepository, memoryStoreModule } from '@hortus/adapter-memory';

const GROUP = 'g';
const TOPIC = 'esp/air/temperature';
const BASE = Date.UTC(2024, 0, 1);

function series(count: number, topic = TOPIC): NewReading[] {
  return Array.from({ length: count }, (_, i) => ({
    group: GROUP,
    topic,
    value: i,
    time: new Date(BASE + i * 1000),
  }));
}

/** Counts how often any stored reading's time is read, by wrapping each series' time column. */
function countTimeReads(repository: ReadingRepository): () => number {
  let reads = 0;
  const seriesByGroup = (
    repository as unknown as { seriesByGroup: Map<string, Map<string, { times: Float64Array }>> }
  ).seriesByGroup;
  for (const topics of seriesByGroup.values()) {
    for (const series of topics.values()) {
      const times = series.times;
      series.times = new Proxy(times, {
        get: (target, property) => {
          if (typeof property === 'string' && /^\d+$/u.test(property)) reads += 1;
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function'
            ? (value as (...args: unknown[]) => unknown).bind(target)
            : value;
        },
      });
    }
  }
  return () => reads;
}

describe('in-memory store specifics', () => {
  describe('readings index', () => {
    it('when a series holds 100k readings, then latest and range bounds touch only a logarithmic number of them', async () => {
      const repository = new InMemoryReadingRepository();
      await repository.add(series(100_000));
      const reads = countTimeReads(repository);

      const latest = await repository.latest(GROUP, TOPIC);
      expect(latest?.value).to.equal(99_999);
      expect(reads()).to.be.at.most(1);

      const window = await repository.newestFirst(
        {
          group: GROUP,
          topic: TOPIC,
          startDate: new Date(BASE + 50_000_000),
          endDate: new Date(BASE + 50_009_000),
        },
        100,
      );
      expect(window.map((r) => r.value)).to.deep.equal(Array.from({ length: 10 }, (_, i) => 50_009 - i));
      // Two binary searches (17 steps each) plus one read per answered reading.
      expect(reads()).to.be.below(60);
    });

    it('when a group has many topics with long series, then latestOfEveryTopic reads one reading per topic', async () => {
      const repository = new InMemoryReadingRepository();
      const topics = ['a', 'b', 'c', 'd', 'e'];
      for (const topic of topics) await repository.add(series(10_000, topic));
      const reads = countTimeReads(repository);

      const latest = await repository.latestOfEveryTopic(GROUP);

      expect(latest.map((r) => [r.topic, r.value])).to.deep.equal(topics.map((topic) => [topic, 9_999]));
      expect(reads()).to.be.at.most(topics.length);
    });

    it('when a duplicate arrives into a long series, then it is found by binary search, not by a scan', async () => {
      const repository = new InMemoryReadingRepository();
      await repository.add(series(100_000));
      const reads = countTimeReads(repository);

      expect(
        await repository.add([{ group: GROUP, topic: TOPIC, value: -1, time: new Date(BASE + 1000) }]),
      ).to.equal(0);
      expect(reads()).to.be.below(25);
    });

    it('when readings arrive in random order, then newestFirst still answers them sorted', async () => {
      const repository = new InMemoryReadingRepository();
      const shuffled = series(500).sort((a, b) => ((a.value * 7919) % 500) - ((b.value * 7919) % 500));
      await repository.add(shuffled);

      const found = await repository.newestFirst({ group: GROUP, topic: TOPIC }, 1000);

      expect(found.map((r) => r.value)).to.deep.equal(Array.from({ length: 500 }, (_, i) => 499 - i));
    });
  });

  describe('ids', () => {
    it('when records are created one after another, then their ids are 24 hex characters that sort by creation', async () => {
      const users = new InMemoryUserRepository();
      const ids: string[] = [];
      for (let i = 0; i < 20; i += 1)
        ids.push(
          (await users.create({ firstName: 'a', lastName: 'b', email: `${i}@x.example`, group: GROUP })).id,
        );

      expect(ids.every((id) => /^[0-9a-f]{24}$/u.test(id))).to.equal(true);
      expect([...ids].sort()).to.deep.equal(ids);
    });
  });

  describe('memoryStoreModule', () => {
    const tokens = [
      READING_REPOSITORY,
      ACTION_REPOSITORY,
      DEVICE_REPOSITORY,
      NOTIFICATION_REPOSITORY,
      HISTORY_CHART_REPOSITORY,
      GROUP_REPOSITORY,
      USER_REPOSITORY,
      ACCESS_KEY_REPOSITORY,
    ];

    it('when loaded, then every repository port resolves to one singleton per container', () => {
      const container = new Container();
      container.load(memoryStoreModule());

      for (const token of tokens) expect(container.get(token)).to.equal(container.get(token));
    });

    it('when two containers load it, then each has its own fresh store', async () => {
      const first = new Container();
      first.load(memoryStoreModule());
      const second = new Container();
      second.load(memoryStoreModule());

      await first.get<ReadingRepository>(READING_REPOSITORY).add(series(1));

      expect(await second.get<ReadingRepository>(READING_REPOSITORY).latest(GROUP, TOPIC)).to.equal(
        undefined,
      );
    });
  });
});
