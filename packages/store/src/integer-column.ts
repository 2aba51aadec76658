/** The largest value an `integer` column holds (PostgreSQL's int4): message indexes (`run_messages.idx`) and event seqs (`run_events.seq`) never pass it. */
export const MAX_INTEGER_COLUMN = 2_147_483_647;
