/** Index of the first element whose key is >= `key` (or > `key` when `after`), in an ascending array. */
export function lowerBound<T>(
  items: readonly T[],
  key: number,
  keyOf: (item: T) => number,
  after = false,
): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const candidate = keyOf(items[middle] as T);
    if (candidate < key || (after && candidate === key)) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Code-unit order, which for the ASCII names in use matches MongoDB's binary string order. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
