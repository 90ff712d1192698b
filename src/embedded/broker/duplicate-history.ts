/**
 * A queue's duplicate-detection history: the MessageId of every message it accepted within the
 * window, and when. As Service Bus does it (Microsoft Learn, "Duplicate detection",
 * https://learn.microsoft.com/azure/service-bus-messaging/duplicate-detection): the queue keeps track
 * of the application-controlled MessageId of all messages sent into it during the time window; a
 * message sent with a MessageId logged in that window is reported as accepted and dropped, and no part
 * of the message but its MessageId is considered. So the comparison is exact, character for character
 * (case included); only the time window forgets an id.
 *
 * Held off the JavaScript heap: the ids in a key table (src/adapters/embedded/key-table.ts, exact on
 * every code unit: its hash only picks a chain), and a ring of their rows and accept times in the
 * order they came, which is time order, so forgetting what left the window looks only at its oldest
 * end. A Map of id strings to times held about 85 bytes per id, some 17 MB of the heap on a
 * 20,000-order `npm start` run, where nothing leaves the Bicep's one-hour window.
 */
import { KeyTable, grownFloat64, grownInt32 } from '../../adapters/embedded/key-table';

export class DuplicateHistory {
  private readonly ids = new KeyTable();
  /** A ring, oldest first from `head`: each id's row in `ids`, and when it was accepted. */
  private rows = new Int32Array(16);
  private times = new Float64Array(16);
  private head = 0;
  private count = 0;

  /** Ids remembered. */
  get size(): number {
    return this.count;
  }

  /**
   * Whether `messageId` was accepted after `windowStart`; when it was not, it is remembered as
   * accepted `at`. Ids accepted at or before `windowStart` are forgotten first.
   */
  seenElseRemember(messageId: string, at: number, windowStart: number): boolean {
    this.forgetUpTo(windowStart);
    if (this.ids.find(0, messageId) !== -1) return true;
    if (this.count === this.rows.length) this.grow();
    const slot = (this.head + this.count) & (this.rows.length - 1);
    this.rows[slot] = this.ids.add(0, messageId);
    this.times[slot] = at;
    this.count += 1;
    return false;
  }

  private forgetUpTo(windowStart: number): void {
    const mask = this.rows.length - 1;
    while (this.count > 0 && this.times[this.head] <= windowStart) {
      this.ids.remove(this.rows[this.head]);
      this.head = (this.head + 1) & mask;
      this.count -= 1;
    }
  }

  /** Twice the room, the ring unrolled so that its oldest id is first. */
  private grow(): void {
    const length = this.rows.length;
    const rows = grownInt32(this.rows, length * 2);
    const times = grownFloat64(this.times, length * 2);
    rows.set(this.rows.subarray(this.head), 0);
    rows.set(this.rows.subarray(0, this.head), length - this.head);
    times.set(this.times.subarray(this.head), 0);
    times.set(this.times.subarray(0, this.head), length - this.head);
    this.rows = rows;
    this.times = times;
    this.head = 0;
  }
}
