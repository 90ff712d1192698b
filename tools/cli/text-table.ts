/**
 * A plain-text table for the terminal: columns padded to their widest cell, two spaces apart.
 * Cells come from the input (ids a producer chose), so each is made safe to line up: control
 * characters shown as escapes, long cells shortened, right-to-left text isolated so that it cannot
 * reorder the columns around it, and widths counted in terminal columns, not UTF-16 units.
 */

/** A cell longer than this many columns is shortened with an ellipsis. */
export const MAX_CELL_WIDTH = 40;

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const WIDE =
  /\p{Extended_Pictographic}|[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;
const ZERO_WIDTH = /^[\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]$/u;
const STRONG_RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]|[\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;
/** First strong isolate and pop directional isolate (Unicode bidi algorithm, UAX #9). */
const FSI = '\u2068';
const PDI = '\u2069';

function graphemeWidth(grapheme: string): number {
  if (ZERO_WIDTH.test(grapheme)) return 0;
  return WIDE.test(grapheme) ? 2 : 1;
}

/** Terminal columns a string takes. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const { segment } of segmenter.segment(text)) width += graphemeWidth(segment);
  return width;
}

/** A cell as it can be shown: escapes for control and invisible characters, at most `max` columns. */
export function safeCell(text: string, max = MAX_CELL_WIDTH): string {
  const visible = text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  let shown = visible;
  if (displayWidth(visible) > max) {
    let width = 0;
    shown = '';
    for (const { segment } of segmenter.segment(visible)) {
      const next = graphemeWidth(segment);
      if (width + next > max - 1) break;
      shown += segment;
      width += next;
    }
    shown += '…';
  }
  return STRONG_RTL.test(shown) ? `${FSI}${shown}${PDI}` : shown;
}

export type Alignment = 'left' | 'right';

/**
 * `maxCellWidth`: shorten longer cells (a summary); unbounded where an id must be copied whole (ops).
 * `align`: each column's alignment; left unless said (the bench right-aligns its numbers).
 */
export function textTable(
  rows: readonly string[][],
  maxCellWidth = Number.POSITIVE_INFINITY,
  align: (column: number) => Alignment = () => 'left',
): string {
  // The last column is never shortened: nothing comes after it to push out of line.
  const cells = rows.map((row) =>
    row.map((cell, column) =>
      safeCell(cell, column === row.length - 1 ? Number.POSITIVE_INFINITY : maxCellWidth),
    ),
  );
  const widths = cells[0].map((_, column) => Math.max(...cells.map((row) => displayWidth(row[column]))));
  return cells
    .map((row) =>
      row
        .map((cell, column) => {
          const padding = ' '.repeat(widths[column] - displayWidth(cell));
          return align(column) === 'right' ? padding + cell : cell + padding;
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
