// The release's regression gate (docs/releasing.md, issue #73): `pnpm bench --against <the last release>
// --rounds 5 --release-note .changeset/<name>.md` writes the run's --against table as a changeset of the
// server, so that `pnpm version-packages` puts it in the release's CHANGELOG entry, and names there every
// scenario whose throughput or CPU per request is below `gateRatio` × that release.
import type { Row } from './report.js';

/** A scenario below this ratio to the last release, in throughput or CPU per request, is named. */
export const gateRatio = 0.97;

type Gate = {
  against: string;
  rows: Row[];
  /** The --against table as printed (report.ts), its header and separator first. */
  table: string[];
  /** How it was measured, as one phrase: the options, Node, the cores, the box's load. */
  measuredAs: string;
};

/** The changeset's text: the server's patch, the table, and the scenarios below the gate (or that none is). */
export function releaseNote({ against, rows, table, measuredAs }: Gate): string {
  const measured = (row: Row) => Number.isFinite(row.againstRatio?.reqPerSec);
  const below = rows.filter(measured).flatMap(({ scenario, againstRatio }) => {
    if (!againstRatio) return [];
    const cpu = 1 / againstRatio.cpuUsPerRequest;
    // Judged as printed (two digits): a row printed 0.97 is not named below 0.97.
    const [throughput, cpuAsPrinted] = [againstRatio.reqPerSec, cpu].map((r) => Number(r.toFixed(2)));
    if ((throughput as number) >= gateRatio && (cpuAsPrinted as number) >= gateRatio) return [];
    return [
      `- ${scenario}: ${againstRatio.reqPerSec.toFixed(2)} × in throughput, ${cpu.toFixed(2)} × in CPU`,
    ];
  });
  const unmeasured = rows.filter((row) => !measured(row)).map((row) => `- ${row.scenario}: not measured`);
  const verdict =
    below.length === 0
      ? [`No scenario${unmeasured.length ? ' measured' : ''} is below ${gateRatio} × ${against}.`]
      : [`Below ${gateRatio} × ${against} (this release / ${against}; higher is faster):`, '', ...below];
  return [
    '---',
    '"@animal-store/server": patch',
    '---',
    '',
    `Performance against ${against} (${measuredAs}):`,
    '',
    ...table,
    '',
    ...verdict,
    ...(unmeasured.length ? ['', 'Every round of these answered nothing:', '', ...unmeasured] : []),
    '',
  ].join('\n');
}
