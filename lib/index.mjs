import parklock from './index.js';

export const {
  Mutex,
  AsyncLock,
  TimeoutError,
  OwnerDiedError,
  futex,
  Latch,
  Once,
  Barrier,
  Condition,
  Semaphore,
  RWLock,
  layouts,
  inspect,
  watchdog,
} = parklock;
export default parklock;
