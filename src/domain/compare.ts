/** Code-unit order rather than locale order, so that every machine sorts alike. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
