// Deadlock detection across threads: the waits-for graph of threads blocked on locks that record
// their owner (the mutex, the write side of the RWLock).
//
// A thread blocked in such a lock (lock_wait.h) that has an interrupt to poll with (every Node
// thread) publishes, at its first poll, the lock it waits for; at every poll it follows the graph:
// the lock's owner, the lock that owner waits for (if it published one), that lock's owner, and
// so on. Reaching itself again means a cycle of threads each blocked waiting for a lock the next
// one holds: none of them can ever proceed. Exactly one of them, the one with the largest
// ThreadId, gives up, and only after it has seen the same cycle at two consecutive polls (a
// deadlock never goes away by itself; a waits-for chain read while locks change hands can look
// like a cycle for an instant, never for a whole poll interval). The others go on waiting, and
// proceed once the one that gave up releases what it holds.
//
// Cost: nothing on any fast path, nothing for a wait shorter than one poll interval; the graph's
// one lock is taken only by threads that have already waited that long.
//
// Limits: owners are read from the lock's words, so a lock held by readers (who are counted, not
// named) is an edge to nobody; asynchronous waits block no thread and are not in the graph; a
// thread without an interrupt (a plain C++ thread) neither publishes nor detects.
#pragma once

#include <cstdint>
#include <vector>

#include "lot/parking_lot.h"
#include "lot/thread_id.h"

namespace parklock {

// A lock as the graph sees it: its primitive's site (WaitSite::kind names it in reports,
// WaitSite::holder reads its owner) and its (first) word.
struct LockIdentity {
  const WaitSite* site;
  const void* address;
  ThreadId owner() const noexcept { return site->holder(address); }
};

// One step of a cycle: `thread` is blocked waiting for `lock`, which the next step's thread
// holds (the last step's lock is held by the first step's thread).
struct WaitsForEdge {
  ThreadId thread;
  const char* kind;
  const void* address;
};

// What a blocked thread keeps while it waits for `lock`: construct it when the wait starts;
// poll() at each poll of the thread's interrupt says whether the thread must give up.
class WaitsForWatch {
 public:
  WaitsForWatch(ThreadId self, const LockIdentity& lock) noexcept : self_(self), lock_(lock) {}
  ~WaitsForWatch();
  WaitsForWatch(const WaitsForWatch&) = delete;
  WaitsForWatch& operator=(const WaitsForWatch&) = delete;

  // True once this thread is the one to give up on a deadlock; the cycle is then deadlock_cycle().
  bool poll();

 private:
  const ThreadId self_;
  const LockIdentity lock_;
  bool published_ = false;
  std::vector<WaitsForEdge> last_cycle_;
};

// The cycle the calling thread's latest deadlock report was about, starting with itself; taken
// (the next call returns nothing until another deadlock is reported).
std::vector<WaitsForEdge> take_deadlock_cycle();

}  // namespace parklock
