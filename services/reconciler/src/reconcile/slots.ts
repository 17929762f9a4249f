/**
 * A counting semaphore: the number of steps one process looks up at once, shared by its sweeps and its
 * requests for one step. `take(n)` grants what is free now without waiting (a sweep claims only as many rows
 * as it can start at once, so no claimed row waits on its lease); `acquire()` waits for one slot.
 */
export interface Slots {
  /** Takes up to `n` free slots now; returns one release function per slot granted. */
  take(n: number): Array<() => void>;
  /** Waits for one slot. */
  acquire(): Promise<() => void>;
  readonly free: number;
}

export function createSlots(size: number): Slots {
  let free = size;
  const waiters: Array<() => void> = [];
  const release = (): (() => void) => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = waiters.shift();
      if (next) next();
      else free++;
    };
  };
  return {
    take(n) {
      const granted = Math.max(0, Math.min(n, free));
      free -= granted;
      return Array.from({ length: granted }, release);
    },
    acquire() {
      if (free > 0) {
        free--;
        return Promise.resolve(release());
      }
      return new Promise((resolve) => waiters.push(() => resolve(release())));
    },
    get free() {
      return free;
    },
  };
}
