import { expect, type TestServer, testStore } from './harness.js';
import { latestOf, type Onboarded, onboarded, startHttpsTestServer, toBoxEndpoint } from './box-requests.js';

/** The firmware's insertOne with any `time` at all (insertOne in box-requests sends `{$date: text}`). */
function insertWithTime(api: TestServer, box: Onboarded, time: unknown) {
  return toBoxEndpoint(
    api,
    box,
    'insertOne',
    { 'Content-Type': 'application/ejson', Accept: 'application/json', 'api-key': box.apiKey },
    JSON.stringify({
      collection: 'datas',
      database: 'Website',
      dataSource: 'Cluster0',
      document: { topic: 'esp/air/temperature', group: box.group, value: '20.00', time },
    }),
  );
}

describe(`Box $date: what the firmware sends, instants that say their offset, and nothing else (${testStore} store)`, () => {
  let api: TestServer;
  let box: Onboarded;
  let group: string;
  beforeEach(async () => {
    api = await startHttpsTestServer();
    // Summer: Berlin is UTC+2.
    api.clock.advance(new Date('2025-06-15T12:30:05Z').getTime() - api.clock.now().getTime());
    group = api.unique('box-dates');
    await api.seed.group(group);
    await api.seed.device('24:6F:28:AA:DE:01', group);
    box = await onboarded(api, '1deaa286f24');
  });
  afterEach(async () => {
    await api.close();
  });

  async function storedTime(): Promise<string | undefined> {
    return (await latestOf(api, group))[0]?.time;
  }

  it("when the firmware's stamp arrives (Berlin wall clock labelled Z), or the same without a Z, then it is read in Berlin", async () => {
    expect((await insertWithTime(api, box, { $date: '2025-06-15T14:29:00.000Z' })).status).to.equal(201);
    expect(await storedTime()).to.equal('2025-06-15T12:29:00.000Z');
    expect((await insertWithTime(api, box, { $date: '2025-06-15T14:30:00.000' })).status).to.equal(201);
    expect(await storedTime()).to.equal('2025-06-15T12:30:00.000Z');
  });

  it('when a stamp carries an explicit offset, then it is taken as it says, not shifted again by the Berlin rule', async () => {
    const reply = await insertWithTime(api, box, { $date: '2025-06-15T17:30:00.000+05:00' });

    expect(reply.status, reply.text).to.equal(201);
    expect(await storedTime()).to.equal('2025-06-15T12:30:00.000Z');
  });

  it('when the stamp is {"$numberLong": "<ms>"}, then it is that instant', async () => {
    const ms = String(Date.parse('2025-06-15T12:28:00.000Z'));

    const reply = await insertWithTime(api, box, { $date: { $numberLong: ms } });

    expect(reply.status, reply.text).to.equal(201);
    expect(await storedTime()).to.equal('2025-06-15T12:28:00.000Z');
  });

  for (const [name, time] of [
    ['a year alone', { $date: '2025' }],
    ['a date alone', { $date: '2025-06-15' }],
    ['a date and an hour without minutes', { $date: '2025-06-15T14' }],
    ['text that Date would guess at', { $date: 'June 15 2025 14:29' }],
    ['a day that does not exist', { $date: '2025-02-30T14:29:00.000Z' }],
    ['a bare number', { $date: 1_749_990_000_000 }],
    ['a $numberLong that is not whole milliseconds', { $date: { $numberLong: '1.5e12' } }],
    ['the last instant a Date can hold', { $date: { $numberLong: '8640000000000000' } }],
    ['the first instant a Date can hold', { $date: { $numberLong: '-8640000000000000' } }],
    ['an extended year at the end of the range', { $date: '+275760-09-13T00:00:00.000Z' }],
    ['an extended year at the start of the range', { $date: '-271821-04-20T00:00:00.000Z' }],
    ['year 0001 in Berlin (before year 1 in UTC)', { $date: '0001-01-01T00:00:00.000Z' }],
    ['year 0000', { $date: '0000-06-01T00:00:00.000+00:00' }],
  ] as const) {
    it(`when $date is ${name}, then 400 in the box endpoint's shape, nothing stored, nothing logged as an error`, async () => {
      const reply = await insertWithTime(api, box, time);

      expect(reply.status, reply.text).to.equal(400);
      const body = reply.json() as { message?: unknown };
      expect(Object.keys(body)).to.deep.equal(['message']);
      expect(body.message)
        .to.be.a('string')
        .that.matches(/time|\$date/u);
      expect(body.message).not.to.match(/ at .*\(/u);
      expect(api.logger.lines.filter(({ level }) => level === 'error')).to.deep.equal([]);
      expect(await storedTime()).to.equal(undefined);
    });
  }

  it('when a stamp is early in year 1 but within range, then it is stored, not a 500', async () => {
    const reply = await insertWithTime(api, box, { $date: '0001-01-02T00:00:00.000+00:00' });

    expect(reply.status, reply.text).to.equal(201);
    expect(api.logger.lines.filter(({ level }) => level === 'error')).to.deep.equal([]);
  });
});
