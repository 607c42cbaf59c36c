/**
 * HTML built from template literals where every interpolated value is escaped unless it is
 * already `SafeHtml` (markup we produced ourselves). Forgetting to escape is therefore impossible:
 * a merchant name such as `<script>` can only ever reach the page as text.
 */
export class SafeHtml {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

export type HtmlValue = string | number | SafeHtml | false | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text safe in element content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

function render(value: HtmlValue): string {
  if (value === false || value === null || value === undefined) return '';
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${name}</p>\`` escapes `name`; nested `html` fragments and arrays pass through. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  return new SafeHtml(
    strings.reduce(
      (out, text, index) => out + text + (index < values.length ? render(values[index]!) : ''),
      '',
    ),
  );
}

/** Markup we generated ourselves (QR SVG from `qrcode`, our own CSS and script files). */
export function trustedHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/**
 * JSON for a `<script type="application/json">` data block: `<`, `>`, `&` and the JavaScript line
 * separators are written as \u escapes, so no value can close the element or open a comment.
 */
export function jsonForScriptElement(value: unknown): SafeHtml {
  return new SafeHtml(
    JSON.stringify(value).replace(
      /[<>&\u2028\u2029]/g,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
  );
}
