/** One event waiting to be sent: its JSON, encoded once at capture. */
export interface Queued {
  /** Capture order, 1, 2, 3…: `flush()` waits for the events up to a number. */
  seq: number;
  /** The event as JSON, and that JSON's size in UTF-8 bytes. */
  json: string;
  bytes: number;
}

/**
 * Queue is a first-in, first-out list of events with a capacity: pushing onto
 * a full queue drops the oldest event and returns it, so memory stays bounded
 * however long the server is away. Taking from the head is O(1) (an index
 * moves; the array is compacted now and then).
 */
export class Queue {
  private items: Queued[] = [];
  private head = 0;

  constructor(private readonly capacity: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** first is the oldest waiting event, or undefined. */
  first(): Queued | undefined {
    return this.items[this.head];
  }

  /** push appends e and returns the event it dropped to make room, if any. */
  push(e: Queued): Queued | undefined {
    let dropped: Queued | undefined;
    if (this.length >= this.capacity) dropped = this.shift();
    this.items.push(e);
    return dropped;
  }

  /**
   * take removes and returns events from the head, at most `max` of them and
   * at most `maxBytes` of JSON (but always one, so that no event is stuck).
   */
  take(max: number, maxBytes: number): Queued[] {
    const out: Queued[] = [];
    let bytes = 0;
    while (out.length < max && this.length > 0) {
      const e = this.items[this.head];
      if (out.length > 0 && bytes + e.bytes > maxBytes) break;
      bytes += e.bytes + 1;
      out.push(this.shift()!);
    }
    return out;
  }

  /** clear removes every event and returns how many there were. */
  clear(): number {
    const n = this.length;
    this.items = [];
    this.head = 0;
    return n;
  }

  private shift(): Queued | undefined {
    if (this.length === 0) return undefined;
    const e = this.items[this.head];
    this.items[this.head++] = undefined as unknown as Queued;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return e;
  }
}

/** utf8Length is the number of bytes of s in UTF-8, without encoding it. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      // A surrogate pair is 2 UTF-16 units and 4 bytes.
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2;
        i++;
      } else n += 2;
    } else n += 2;
  }
  return n;
}
