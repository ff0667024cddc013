// A key's requests per UTC day as stacked bars (admitted, limited, banned), the numbers of the day pointed at
// or chosen with the arrow keys, and the same numbers as a table for screen readers. Written by hand:
// docs/decisions.md#console-chart.
import type { DayUsage } from '@animal-store/client/admin';
import { useState } from 'preact/hooks';
import {
  addDays,
  count,
  everyDay,
  isUtcDay,
  maxRangeDays,
  requestsOf,
  scaleTop,
  usageCsv,
} from '../format.js';

const width = 720;
const height = 240;
const axis = 48; // room on the left for the scale's numbers
const plot = { left: axis, top: 8, width: width - axis - 8, height: height - 8 - 24 };
const kinds = ['admitted', 'limited', 'banned'] as const;

export type Range = { from: string; to: string };

/** Saves `text` as a file of that name, from the page itself (nothing asked of the service again). */
function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const link = Object.assign(document.createElement('a'), { href: url, download: name });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

export function UsageChart(props: {
  range: Range;
  onRange: (range: Range) => void;
  days: DayUsage[] | null;
  /** What the downloaded CSV is named after (the key). */
  name: string;
}) {
  const { range } = props;
  const days = everyDay(range.from, range.to, props.days ?? []);
  const top = scaleTop(Math.max(0, ...days.map(requestsOf)));
  const [chosen, setChosen] = useState<number | null>(null);
  const day = chosen === null ? undefined : days[chosen];
  const slot = plot.width / Math.max(days.length, 1);
  const y = (n: number) => (n / top) * plot.height;
  const onKey = (event: KeyboardEvent) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, Home: -days.length, End: days.length }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    setChosen((index) => Math.min(days.length - 1, Math.max(0, (index ?? days.length) + step)));
  };

  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Daily usage</h2>
      <RangeForm key={`${range.from} ${range.to}`} range={range} onRange={props.onRange} />
      <ul class="legend" aria-hidden="true">
        {kinds.map((kind) => (
          <li key={kind} class={kind}>
            {kind}
          </li>
        ))}
      </ul>
      <svg
        viewBox={`0 0 ${width} ${height}`}
        class="chart"
        role="img"
        tabindex={0}
        aria-label={`Requests per UTC day from ${range.from} to ${range.to}; the table below has the numbers. Arrow keys choose a day.`}
        onKeyDown={onKey}
        onPointerLeave={() => setChosen(null)}
      >
        {[0, top / 2, top].filter(Number.isInteger).map((tick) => (
          <g key={tick} class="tick">
            <line
              x1={plot.left}
              x2={plot.left + plot.width}
              y1={plot.top + plot.height - y(tick)}
              y2={plot.top + plot.height - y(tick)}
            />
            <text x={plot.left - 6} y={plot.top + plot.height - y(tick) + 4} text-anchor="end">
              {count(tick)}
            </text>
          </g>
        ))}
        {days.map((d, index) => {
          let base = plot.top + plot.height;
          return (
            <g
              key={d.date}
              class={index === chosen ? 'day chosen' : 'day'}
              data-date={d.date}
              onPointerEnter={() => setChosen(index)}
            >
              <rect
                class="hover"
                x={plot.left + index * slot}
                y={plot.top}
                width={slot}
                height={plot.height}
              />
              {kinds.map((kind) => {
                const h = y(d[kind]);
                base -= h;
                return (
                  <rect
                    key={kind}
                    class={kind}
                    x={plot.left + index * slot + slot * 0.1}
                    y={base}
                    width={slot * 0.8}
                    height={h}
                  />
                );
              })}
            </g>
          );
        })}
        {days.map((d, index) => {
          // A tick under every day; a week's date under every seventh from the last (not by the ends').
          const x = plot.left + (index + 0.5) * slot;
          const weekly =
            (days.length - 1 - index) % 7 === 0 && x > plot.left + 90 && x < plot.left + plot.width - 90;
          return (
            <g key={`tick ${d.date}`} class="day-tick">
              <line x1={x} x2={x} y1={plot.top + plot.height} y2={plot.top + plot.height + 4} />
              {weekly && (
                <text x={x} y={height - 6} class="date week" text-anchor="middle">
                  {d.date.slice(5)}
                </text>
              )}
            </g>
          );
        })}
        <text x={plot.left + 4} y={plot.top + 12} class="unit">
          requests a day
        </text>
        {days.every((d) => requestsOf(d) === 0) ? (
          <text
            x={plot.left + plot.width / 2}
            y={plot.top + plot.height / 2}
            class="empty"
            text-anchor="middle"
          >
            No requests in these days.
          </text>
        ) : null}
        <text x={plot.left} y={height - 6} class="date">
          {range.from}
        </text>
        <text x={plot.left + plot.width} y={height - 6} class="date" text-anchor="end">
          {range.to}
        </text>
      </svg>
      <p class="day-detail" aria-live="polite">
        {day
          ? `${day.date}: ${count(day.admitted)} admitted, ${count(day.limited)} limited, ${count(day.banned)} banned`
          : 'Point at a day, or focus the chart and use the arrow keys, for its numbers.'}
      </p>
      <button
        type="button"
        onClick={() => download(`${props.name}-usage-${range.from}-${range.to}.csv`, usageCsv(days))}
      >
        Download CSV
      </button>
      <DayTable days={days} />
    </section>
  );
}

/** Why a range cannot be shown, in words, or '' when it can: UTC days as YYYY-MM-DD, in order, not too many. */
export function rangeProblem(from: string, to: string): string {
  if (!isUtcDay(from) || !isUtcDay(to)) return 'Write each day as YYYY-MM-DD (a UTC day).';
  if (from > to) return 'From is after To.';
  if (addDays(from, maxRangeDays) <= to) return `At most ${maxRangeDays} days at once.`;
  return '';
}

/**
 * The range's days as ISO dates, as every other date of the console (a date input shows the browser's
 * locale), checked before they are asked for.
 */
function RangeForm({ range, onRange }: { range: Range; onRange: (range: Range) => void }) {
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  return (
    <form
      class="range"
      onSubmit={(event) => {
        event.preventDefault();
        const form = event.currentTarget;
        const first = form.elements.namedItem('from') as HTMLInputElement;
        first.setCustomValidity(rangeProblem(from, to));
        if (form.reportValidity()) onRange({ from, to });
      }}
    >
      <label>
        From
        <input
          name="from"
          required
          value={from}
          placeholder="YYYY-MM-DD"
          inputMode="numeric"
          spellcheck={false}
          onInput={(event) => {
            event.currentTarget.setCustomValidity('');
            setFrom(event.currentTarget.value.trim());
          }}
        />
      </label>
      <label>
        To
        <input
          name="to"
          required
          value={to}
          placeholder="YYYY-MM-DD"
          inputMode="numeric"
          spellcheck={false}
          onInput={(event) => setTo(event.currentTarget.value.trim())}
        />
      </label>
      <button type="submit">Show</button>
    </form>
  );
}

function DayTable({ days }: { days: DayUsage[] }) {
  const total = (kind: (typeof kinds)[number]) => count(days.reduce((sum, day) => sum + day[kind], 0));
  return (
    <table class="visually-hidden">
      <caption>Requests per UTC day</caption>
      <thead>
        <tr>
          <th scope="col">Day</th>
          {kinds.map((kind) => (
            <th key={kind} scope="col">
              {kind}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {days.map((day) => (
          <tr key={day.date}>
            <th scope="row">{day.date}</th>
            {kinds.map((kind) => (
              <td key={kind}>{count(day[kind])}</td>
            ))}
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">All days</th>
          {kinds.map((kind) => (
            <td key={kind}>{total(kind)}</td>
          ))}
        </tr>
      </tfoot>
    </table>
  );
}
