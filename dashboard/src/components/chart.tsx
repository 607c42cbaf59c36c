import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface DailySeries {
  label: string;
  values: (number | null)[];
  color: string;
}

const DAY_MS = 86_400_000;
/** The value axis' width, taken from the chart's for the bars. */
const VALUE_AXIS_PX = 60;
/** Tick steps of an axis of counts: whole numbers only (no "0.25 operations"). */
const WHOLE_NUMBER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000];
/** The shortest span a chart shows: a week reads better than one lonely bar. */
const MINIMUM_DAYS = 7;

/**
 * Calendar days (YYYY-MM-DD, UTC) from the earliest given to today, with no gaps and at least a week;
 * none when no day is given (the chart then says it has no data).
 */
export function daysBetween(days: string[]): string[] {
  if (days.length === 0) return [];
  const today = new Date().toISOString().slice(0, 10);
  const sorted = [...days, today].sort();
  const last = sorted[sorted.length - 1]!;
  const weekBefore = new Date(Date.parse(`${last}T00:00:00Z`) - (MINIMUM_DAYS - 1) * DAY_MS)
    .toISOString()
    .slice(0, 10);
  const first = sorted[0]! < weekBefore ? sorted[0]! : weekBefore;
  const out: string[] = [];
  for (let day = Date.parse(`${first}T00:00:00Z`); ; day += DAY_MS) {
    const text = new Date(day).toISOString().slice(0, 10);
    out.push(text);
    if (text >= last) return out;
  }
}

/**
 * A chart by day, drawn by uPlot on a canvas: bars for one series, lines with points for several.
 * A figure with a text summary for screen readers; it follows its container's width. `counts` keeps the
 * value axis to whole numbers (operations, deliveries).
 */
export function DailyChart({
  days,
  series,
  summary,
  valueLabel,
  counts = false,
}: {
  days: string[];
  series: DailySeries[];
  summary: string;
  valueLabel: string;
  counts?: boolean;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element || days.length === 0) return;
    const xs = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
    const single = series.length === 1;
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        // Half a day either side, so the first and last bars are whole.
        scales: {
          x: { time: true, range: [xs[0]! - 43_200, xs[xs.length - 1]! + 43_200] },
          // Zero always in view; a balance may go below it.
          y: { range: (_u, min, max) => [Math.min(0, min * 1.1), Math.max(1, max * 1.1)] },
        },
        axes: [
          {
            // One tick per day at most, labelled month-day (UTC).
            incrs: [86_400, 2 * 86_400, 7 * 86_400, 30 * 86_400],
            values: (_u, splits) => splits.map((split) => new Date(split * 1000).toISOString().slice(5, 10)),
          },
          { label: valueLabel, size: VALUE_AXIS_PX, ...(counts && { incrs: WHOLE_NUMBER_STEPS }) },
        ],
        legend: { show: !single },
        series: [
          {},
          ...series.map((entry) => ({
            label: entry.label,
            stroke: entry.color,
            fill: single ? `${entry.color}cc` : undefined,
            width: single ? 0 : 2,
            points: { show: !single },
            paths: single ? uPlot.paths.bars!({ size: [0.6, 48] }) : undefined,
          })),
        ],
      },
      [xs, ...series.map((entry) => entry.values)],
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, element.clientWidth), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days.join(), JSON.stringify(series), counts]);
  if (days.length === 0) return <div class="notice empty">No data to chart yet.</div>;
  return (
    <figure class="chart-figure">
      <div ref={holder} class="chart" role="img" aria-label={summary} />
      <figcaption class="sr-only">{summary}</figcaption>
    </figure>
  );
}

export interface Category {
  label: string;
  value: number;
}

/** The category axis' font, set on the axis and used to measure its labels. */
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const AXIS_LINE_PX = 15;
/** Room kept between two neighbouring labels. */
const LABEL_GAP_PX = 8;

let measuring: CanvasRenderingContext2D | null | undefined;

/** A text's width in the axis font (measured on a scratch canvas, as the chart will draw it). */
function labelWidth(text: string): number {
  measuring ??= document.createElement('canvas').getContext('2d');
  if (!measuring) return text.length * 8;
  measuring.font = AXIS_FONT;
  return measuring.measureText(text).width;
}

/** A label broken at spaces into lines no wider than `maxPx` (a longer word keeps a line of its own). */
export function wrapLabel(label: string, maxPx: number, widthOf = labelWidth): string {
  const lines: string[] = [];
  for (const word of label.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && widthOf(`${last} ${word}`) <= maxPx)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines.join('\n');
}

/**
 * Bars for named categories (a chain, a status), drawn by uPlot on a canvas: the x scale is the
 * bar's index and the axis writes its label. A figure with a text summary for screen readers.
 */
export function CategoryChart({
  categories,
  color,
  summary,
  valueLabel,
}: {
  categories: Category[];
  color: string;
  summary: string;
  valueLabel: string;
}) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = holder.current;
    if (!element || categories.length === 0) return;
    const xs = categories.map((_category, index) => index);
    const plot = new uPlot(
      {
        width: Math.max(280, element.clientWidth),
        height: 220,
        scales: {
          x: { time: false, range: [-0.5, categories.length - 0.5] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
        },
        axes: [
          {
            // One tick per bar, labelled with its category, wrapped to the bar's slot (two labels side by
            // side must not run into each other on a phone); the axis grows by the lines it needs.
            incrs: [1],
            values: (u, splits) => {
              // The plotting area once laid out (device pixels in bbox); before that, a safe guess.
              const plotPx = u.bbox?.width ? u.bbox.width / uPlot.pxRatio : u.width - 2 * VALUE_AXIS_PX;
              const slotPx = plotPx / categories.length;
              return splits.map((split) =>
                wrapLabel(categories[Math.round(split)]?.label ?? '', slotPx - LABEL_GAP_PX),
              );
            },
            font: AXIS_FONT,
            size: (_u, values) =>
              20 +
              AXIS_LINE_PX * Math.max(1, ...(values ?? []).map((value) => String(value).split('\n').length)),
          },
          // Counts: whole-number ticks only.
          { label: valueLabel, size: VALUE_AXIS_PX, incrs: WHOLE_NUMBER_STEPS },
        ],
        legend: { show: false },
        series: [
          {},
          {
            label: valueLabel,
            stroke: color,
            fill: `${color}cc`,
            width: 0,
            points: { show: false },
            paths: uPlot.paths.bars!({ size: [0.6, 64] }),
          },
        ],
      },
      [xs, categories.map((category) => category.value)],
      element,
    );
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, element.clientWidth), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [JSON.stringify(categories), color]);
  if (categories.length === 0) return <div class="notice empty">No data to chart yet.</div>;
  return (
    <figure class="chart-figure">
      <div ref={holder} class="chart" role="img" aria-label={summary} />
      <figcaption class="sr-only">{summary}</figcaption>
    </figure>
  );
}
