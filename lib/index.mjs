import parklock from './index.js';

export const { Mutex, AsyncLock, TimeoutError, layouts } = parklock;
export default parklock;
