/**
 * A queue's duplicate-detection history: the MessageId of every message it accepted within the
 * window, and when. As Service Bus does it (Microsoft Learn, "Duplicate detection",
 * https://learn.microsoft.com/azure/service-bus-messaging/duplicate-detection): the queue keeps track
 * of the application-controlled MessageId of all messages sent into it during the time window; a
 * message sent with a MessageId logged in that window is reported as accepted and dropped, and no part
 * of the message but its MessageId is considered. So the comparison is exact, character for character
 * (case included); only the time window forgets an id.
 *
 * Held off the JavaScript heap: the ids in a key table (local/store/key-table.ts, exact on
 * every code unit: its hash only picks a chain), and a queue of their rows and accept times in the
 * order they came, which is time order, so forgetting what left the window looks only at its oldest
 * end. A Map of id strings to times held about 85 bytes per id, some 17 MB of the heap on a
 * 20,000-order `npm start` run, where nothing leaves the Bicep's one-hour window.
 */
import { CHUNK_ROWS } from '../store/columns';
import { KeyTable } from '../store/key-table';

export class DuplicateHistory {
  private readonly ids = new KeyTable();
  /**
   * Oldest first: each id's row in `ids`, and when it was accepted, in chunks of CHUNK_ROWS; the
   * oldest chunk goes once every id in it is forgotten, a new one comes when the newest is full.
   */
  private readonly rows: Int32Array[] = [];
  private readonly times: Float64Array[] = [];
  /** Where the oldest id is in the first chunk, and where the next goes in the last. */
  private head = 0;
  private tail = CHUNK_ROWS;
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
    if (this.tail === CHUNK_ROWS) {
      this.rows.push(new Int32Array(CHUNK_ROWS));
      this.times.push(new Float64Array(CHUNK_ROWS));
      this.tail = 0;
    }
    const last = this.rows.length - 1;
    this.rows[last][this.tail] = this.ids.add(0, messageId);
    this.times[last][this.tail] = at;
    this.tail += 1;
    this.count += 1;
    return false;
  }

  private forgetUpTo(windowStart: number): void {
    while (this.count > 0 && this.times[0][this.head] <= windowStart) {
      this.ids.remove(this.rows[0][this.head]);
      this.head += 1;
      this.count -= 1;
      if (this.count === 0) {
        // Nothing left: the chunks go, the next id starts a new one.
        this.rows.length = 0;
        this.times.length = 0;
        this.head = 0;
        this.tail = CHUNK_ROWS;
      } else if (this.head === CHUNK_ROWS) {
        this.rows.shift();
        this.times.shift();
        this.head = 0;
      }
    }
  }
}
