import { escapeHtml, html, jsonForScriptElement, trustedHtml } from './html';

describe('html templates', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const name = `<script>alert("x")</script> & 'quotes'`;
    expect(html`<p title="${name}">${name}</p>`.markup).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quotes&#39;</p>',
    );
  });

  it('passes nested fragments and arrays through once, and drops false, null and undefined', () => {
    const items = ['a<b', 'c'].map((item) => html`<li>${item}</li>`);
    // prettier-ignore
    const list = html`<ul>${items}${false}${null}${undefined}${0}</ul>`;
    expect(list.markup).toBe('<ul><li>a&lt;b</li><li>c</li>0</ul>');
    expect(html`${trustedHtml('<svg></svg>')}`.markup).toBe('<svg></svg>');
  });

  it('escapeHtml leaves ordinary text alone', () => {
    expect(escapeHtml('Corner Café 25.5 USDC')).toBe('Corner Café 25.5 USDC');
  });

  it('JSON for a script element cannot close the element and parses back to the same value', () => {
    const value = { name: '</script><script>alert(1)</script>', separators: '\u2028\u2029', amp: 'a&b' };
    const markup = jsonForScriptElement(value).markup;
    expect(markup).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(markup)).toEqual(value);
  });
});
