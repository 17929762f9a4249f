/** The baseline's BullMQ queue (under the bench's prefix), shared by its producer and its worker. */
export const BASELINE_QUEUE = 'baseline';
/** What the baseline worker prints on stdout once it takes jobs. */
export const BASELINE_READY_LINE = 'baseline worker ready';
