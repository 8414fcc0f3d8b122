import { csvTextCell, formatReadings, fromCsvTextCell, type Reading } from '@hortus/core';
import { expect } from './support.js';

const time = new Date('2026-06-10T12:00:00Z');
/** What a CSV reader makes of one cell. */
const unquote = (cell: string): string =>
  cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell;
const reading = (group: string, topic: string, value: number): Reading => ({
  id: 'r',
  group,
  topic,
  value,
  time,
});

describe('CSV export cells (formula injection)', () => {
  it('when a text cell starts with =, +, -, @, a tab or a carriage return, then it gets a single quote and is quoted', () => {
    expect(csvTextCell('=HYPERLINK("https://evil.example")')).to.equal(
      `"'=HYPERLINK(""https://evil.example"")"`,
    );
    expect(csvTextCell('+41 22')).to.equal(`"'+41 22"`);
    expect(csvTextCell('-2')).to.equal(`"'-2"`);
    expect(csvTextCell('@SUM(A1:A9)')).to.equal(`"'@SUM(A1:A9)"`);
    expect(csvTextCell('\tcmd')).to.equal(`"'\tcmd"`);
    expect(csvTextCell('\rcmd')).to.equal(`"'\rcmd"`);
    expect(csvTextCell("'=already guarded")).to.equal(`"''=already guarded"`);
  });

  it('when a text cell is plain, then it is written as before: verbatim, or RFC 4180 quoted', () => {
    expect(csvTextCell('esp/air/temperature')).to.equal('esp/air/temperature');
    expect(csvTextCell("it's a-ok")).to.equal("it's a-ok");
    expect(csvTextCell('odd, "quoted" topic')).to.equal('"odd, ""quoted"" topic"');
  });

  it('when a guarded cell is read back, then the text is exactly what was exported, whatever quotes it began with', () => {
    for (const text of ['=1', '-2', "'=x", "''@y", "'plain", 'plain', '+', '\tx'])
      expect(fromCsvTextCell(unquote(csvTextCell(text))), text).to.equal(text);
    expect(fromCsvTextCell("'plain")).to.equal("'plain");
  });

  it('when readings are formatted, then group and topic are guarded, and a negative value stays a number', () => {
    const text = formatReadings([reading('=cmd|/c calc', '@esp/air', -3.5), reading('gh', '-5', 0)], 'csv');
    expect(text).to.equal(
      `"'=cmd|/c calc","'@esp/air",-3.5,2026-06-10T12:00:00.000Z\ngh,"'-5",0,2026-06-10T12:00:00.000Z\n`,
    );
    expect(formatReadings([reading('=x', '-5', -1)], 'ndjson')).to.equal(
      '{"group":"=x","topic":"-5","value":-1,"time":"2026-06-10T12:00:00.000Z"}\n',
    );
  });
});
