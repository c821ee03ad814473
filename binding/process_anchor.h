// The one copy of the addon a process uses, and keeping it loaded.
//
// Every worker that loads the same file shares one copy of the library (its parking lot, its
// ended-thread registry, its thread-id counter). A different copy of the file, such as a second
// version of the package, would have its own, so a lock released through one could never wake a
// waiter of the other: it is refused at load instead.
//
// The first copy to claim the process leaves a process-wide anchor that later copies find: on
// POSIX an exported symbol that the dynamic loader resolves (dlsym(RTLD_DEFAULT)), on Windows a
// named mapping keyed by the process id. Neither outlives the process or reaches a child, unlike
// an environment variable, and neither is read or written by anything else.
//
// Claiming also pins the library: Node unloads an addon when the last environment using it ends,
// and a later load could map it elsewhere, with a fresh parking lot and thread-id counter, while
// the SharedArrayBuffers of the process still hold the old thread ids and queued waiters.
#pragma once

namespace parklock::binding {

// Whether this copy is the process's: true for the first copy to ask and for every later call
// from that copy (any thread). Also true when the platform could not say, since refusing the
// only copy would be worse than not recognising a second one.
bool claim_process() noexcept;

// The platform's claim (process_anchor_<os>.cpp): asked once per copy, by claim_process().
bool claim_this_copy() noexcept;

}  // namespace parklock::binding
