/**
 * When a receiver last accepted each session of a queue (its place in acceptance order), for every
 * session ever accepted: a session that empties and fills again keeps its place, for fairness. One
 * id per order of a run, so held as the duplicate-detection history holds its ids, off the heap: the
 * ids in a key table (local/store/key-table.ts, exact on every code unit), the times in a
 * column by row. A Map of the ids held some 46 bytes a session in the heap.
 */
import { Float64Column } from '../store/columns';
import { KeyTable } from '../store/key-table';

export class AcceptanceTimes {
  private readonly ids = new KeyTable();
  private readonly times = new Float64Column();

  get(sessionId: string): number | undefined {
    const row = this.ids.find(0, sessionId);
    return row === -1 ? undefined : this.times.get(row);
  }

  set(sessionId: string, accepted: number): void {
    let row = this.ids.find(0, sessionId);
    if (row === -1) {
      row = this.ids.add(0, sessionId);
      this.times.reach(this.ids.rowLimit);
    }
    this.times.set(row, accepted);
  }
}
