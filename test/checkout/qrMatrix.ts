import QRCode from 'qrcode';

/**
 * Reads back which modules a QR SVG paints dark, by interpreting its path the way a renderer
 * would (M/m moves, h runs on the row the pen is on), so a test can compare the picture with the
 * symbol `qrcode` builds for an expected text.
 */
export function darkModulesOfSvg(svg: string): Set<string> {
  const d = /<path[^>]*\bstroke="[^"]+"[^>]*\bd="([^"]*)"/.exec(svg)?.[1];
  if (d === undefined) throw new Error('no stroked path in the QR SVG');
  const dark = new Set<string>();
  let x = 0;
  let y = 0;
  for (const [, command, args] of d.matchAll(/([MmHh])([^MmHh]*)/g)) {
    const numbers = args!
      .trim()
      .split(/[\s,]+/)
      .map(Number);
    if (command === 'M') [x, y] = [numbers[0]!, numbers[1]!];
    else if (command === 'm') [x, y] = [x + numbers[0]!, y + numbers[1]!];
    else {
      const end = command === 'H' ? numbers[0]! : x + numbers[0]!;
      for (let column = x; column < end; column++) dark.add(`${column},${Math.floor(y)}`);
      x = end;
    }
  }
  return dark;
}

/** The dark modules of the QR symbol for `text`, offset by the quiet-zone `margin`. */
export function darkModulesOfText(
  text: string,
  { errorCorrectionLevel, margin }: { errorCorrectionLevel: 'L' | 'M' | 'Q' | 'H'; margin: number },
): Set<string> {
  const { modules } = QRCode.create(text, { errorCorrectionLevel });
  const dark = new Set<string>();
  for (let row = 0; row < modules.size; row++) {
    for (let column = 0; column < modules.size; column++) {
      if (modules.get(row, column)) dark.add(`${column + margin},${row + margin}`);
    }
  }
  return dark;
}
