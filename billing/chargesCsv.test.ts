import { parse } from 'csv-parse/sync';
import { csvLine, neutraliseFormula } from './chargesCsv';

describe('charges CSV', () => {
  it.each([
    ['=HYPERLINK("http://evil")', `'=HYPERLINK("http://evil")`],
    ['+1+2', `'+1+2`],
    ['-2+3', `'-2+3`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\tcmd', `'\tcmd`],
    ['\rcmd', `'\rcmd`],
    ['plain label', 'plain label'],
    ['a=b', 'a=b'],
    ['', ''],
  ])('neutralises %j as %j', (field, expected) => {
    expect(neutraliseFormula(field)).toBe(expected);
  });

  it('quotes commas, quotes and line breaks so a CSV parser reads the fields back', () => {
    const fields = ['x,y', 'say "hi"', 'two\nlines', '=1+1', null, 42];
    const [record] = parse(csvLine(fields), { relax_quotes: false });
    expect(record).toEqual(['x,y', 'say "hi"', 'two\nlines', `'=1+1`, '', '42']);
  });
});
