/**
 * CSV of gas charges (RFC 4180: comma-separated, CRLF line ends, fields quoted when they hold a quote,
 * comma or line break). Spreadsheet formula injection is neutralised: a field that starts with `=`, `+`,
 * `-`, `@`, tab or CR gets a leading `'`, so a spreadsheet shows it as text instead of evaluating it.
 */

const FORMULA_TRIGGER = /^[=+\-@\t\r]/;

export function neutraliseFormula(field: string): string {
  return FORMULA_TRIGGER.test(field) ? `'${field}` : field;
}

function csvField(value: string | number | null): string {
  const text = neutraliseFormula(value === null ? '' : String(value));
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(fields: (string | number | null)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
