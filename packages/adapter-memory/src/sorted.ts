/** Code-unit order, which for the ASCII names in use matches MongoDB's binary string order. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
