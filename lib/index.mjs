import parklock from './index.js';

export const { Mutex, AsyncLock, TimeoutError, futex, layouts } = parklock;
export default parklock;
