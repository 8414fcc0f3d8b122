/**
 * When each group is next due, as a binary min-heap of (time, group): taking what is due costs the number
 * of due groups times log(groups), and a tick with nothing due looks at the top only. Moving a group's time
 * leaves its old entry in the heap, skipped when it surfaces; the heap is rebuilt when such entries pile up.
 */
export class DueSchedule {
  private readonly dueAt = new Map<string, number>();
  private heap: { at: number; group: string }[] = [];

  /** Sets when `group` is next due; undefined: only a change makes it due. */
  set(group: string, at: number | undefined): void {
    if (at === undefined) {
      this.dueAt.delete(group);
      return;
    }
    if (this.dueAt.get(group) === at) return;
    this.dueAt.set(group, at);
    this.push({ at, group });
    if (this.heap.length > 2 * this.dueAt.size + 1024) this.rebuild();
  }

  delete(group: string): void {
    this.dueAt.delete(group);
  }

  clear(): void {
    this.dueAt.clear();
    this.heap = [];
  }

  /** The groups due at or before `now`, taken off the schedule. */
  takeDue(now: number): string[] {
    const due: string[] = [];
    for (let top = this.heap[0]; top !== undefined && top.at <= now; top = this.heap[0]) {
      this.pop();
      if (this.dueAt.get(top.group) !== top.at) continue;
      this.dueAt.delete(top.group);
      due.push(top.group);
    }
    return due;
  }

  /** How many groups have a time. */
  get size(): number {
    return this.dueAt.size;
  }

  private rebuild(): void {
    this.heap = [];
    for (const [group, at] of this.dueAt) this.push({ at, group });
  }

  private push(entry: { at: number; group: string }): void {
    const heap = this.heap;
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = heap[parent];
      if (above === undefined || above.at <= entry.at) break;
      heap[index] = above;
      index = parent;
    }
    heap[index] = entry;
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const leftEntry = heap[left];
      const rightEntry = heap[right];
      if (leftEntry === undefined) break;
      const child = rightEntry !== undefined && rightEntry.at < leftEntry.at ? right : left;
      const childEntry = heap[child];
      if (childEntry === undefined || childEntry.at >= last.at) break;
      heap[index] = childEntry;
      index = child;
    }
    heap[index] = last;
  }
}
