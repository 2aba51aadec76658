import { randomBytes } from 'node:crypto';

/** The largest value of the 12-bit counter a UUIDv7's `rand_a` holds here. */
const MAX_COUNTER = 0xfff;

let lastMs = 0;
let counter = 0;

/**
 * A time-ordered UUID (version 7, RFC 9562): 48 bits of Unix milliseconds, then 74 random bits, of which
 * the first 12 (`rand_a`) are a counter that orders the ids one process makes in the same millisecond
 * (the RFC's method 1; a millisecond that runs out of counter borrows the next, and a clock that steps
 * back keeps counting from the last one). New rows keyed by such ids land at the right edge of a btree
 * instead of on random pages, which Postgres logs whole after each checkpoint (docs/operations.md).
 */
export function uuidV7(): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // A random start in the lower half leaves at least 2,048 ids for this millisecond.
    counter = randomBytes(2).readUInt16BE(0) & (MAX_COUNTER >> 1);
  } else if (counter < MAX_COUNTER) {
    counter += 1;
  } else {
    lastMs += 1;
    counter = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
