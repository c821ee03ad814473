import parklock from './index.js';

export const { Mutex, AsyncLock, TimeoutError, futex, Latch, Barrier, Condition, layouts } = parklock;
export default parklock;
